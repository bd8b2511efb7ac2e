// A Node project compiled with `moduleResolution: bundler`, which does not use the "node" export
// condition: the bare name gives the browser entry's types, and `safetensors-wasm/node` the Node
// entry's (js/node.d.ts: paths, writeFile, nodeFileSource, writeAwkward). Compiled by
// tests/js/types-packaging.test.js in a folder of its own, the package linked into node_modules.
import { nodeFileSource, open, openFile, writeAwkward, writeFile, type SafetensorsFile } from 'safetensors-wasm/node'
import * as bare from 'safetensors-wasm'

export async function convert(path: string, out: string): Promise<number> {
  const f: SafetensorsFile = await openFile(path)
  const t = await f.tensor(f.names[0])
  await writeFile(out, [t], { metadata: { from: path } })
  await writeAwkward(`${out}.ragged`, [[1, 2], [3]])
  const source = await nodeFileSource(out)
  const again = await open(source)
  t.dispose()
  return again.names.length
}

// The bare name is the browser entry here: it has the shared API and no Node-only export.
export const shared: typeof open = bare.open
// @ts-expect-error writeFile is in safetensors-wasm/node
export const missing = bare.writeFile
