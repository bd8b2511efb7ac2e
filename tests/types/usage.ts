// Compiled by `tsc --strict` in the tests: the public types must accept typical use.
import { open, serialize, SafetensorsError, type ShardedFile, type Tensor, type TensorInfo } from 'safetensors-wasm'

export async function example(bytes: Uint8Array): Promise<number> {
  const f = await open(bytes)
  const info: TensorInfo = f.info(f.names[0])
  const t: Tensor = await f.tensor(info.name, { onProgress: ({ loaded, total }) => void (loaded / total) })
  const values: Float32Array = t.toFloat32()
  const s = t.stats({ bins: 10 })
  t.dispose()
  const out: Uint8Array = await serialize({ x: { dtype: 'F32', shape: [1], data: new Float32Array([s.mean]) } }, { metadata: { a: 'b' } })
  try {
    await f.slice('x', [0, [1, null]])
  } catch (e) {
    if (e instanceof SafetensorsError) return e.offset ?? -1
  }
  await f.close()
  return values.length + out.length
}

// A sharded set from files in hand: the index with its shards is a ShardedFile.
export async function localShards(index: File, files: File[]): Promise<string[]> {
  const byName = new Map(files.map((file) => [file.name, file]))
  const f: ShardedFile = await open(index, { shards: (path) => byName.get(path) })
  const g: ShardedFile = await open(await index.arrayBuffer(), { shards: byName })
  return [...f.shards, ...g.names]
}
