// The browser entry's types (js/index.d.ts, the "default" export condition): what a page imports
// has no Node-only function. Compiled by `tsc --strict` with usage.ts; nothing here runs.
import { open, serialize, type SafetensorsFile, type ShardedFile } from '../../js/index.js'
// @ts-expect-error writeFile is Node's (js/node.d.ts)
import { writeFile } from '../../js/index.js'
// @ts-expect-error nodeFileSource is Node's
import { nodeFileSource } from '../../js/index.js'
// @ts-expect-error writeAwkward is Node's
import { writeAwkward } from '../../js/index.js'

export async function page(file: File, input: string): Promise<string[]> {
  const f: SafetensorsFile = await open(file)
  const g: SafetensorsFile | ShardedFile = await open(new URL(input, 'https://example.org/'))
  const bytes: Uint8Array = await serialize({ w: { dtype: 'U8', shape: [1], data: new Uint8Array(1) } })
  void [bytes, writeFile, nodeFileSource, writeAwkward]
  return [...f.names, ...g.names]
}
