// A misspelt option fails to compile, wherever options are taken: every options object is closed
// (no index signature), and excess property checks still apply through open's overloads, the
// intersections (`ChunkOptions & { slice }`, `WriteOptions & { signal }`), the Omit of openFile
// and castTensor's generic dtype. Each misspelling sits next to the same call spelt right, so the
// expected error can only be the misspelling; tests/js/types-packaging.test.js compiles this file
// with the `@ts-expect-error` lines taken out and checks that each marked line fails for its
// misspelt name and for nothing else. Compiled by `tsc --strict` (tests/tsconfig.json); nothing
// here runs.
import {
  castTensor, open, openFile, openSharded, serialize, serializeStream, urlSource, writeAwkward, writeFile,
  SafetensorsError, type AwkwardArray, type GPUDeviceLike, type SafetensorsFile, type ShardedFile, type Tensor,
} from 'safetensors-wasm'

export async function misspelt(url: string, bytes: Uint8Array, shards: Map<string, Uint8Array>, signal: AbortSignal,
  f: SafetensorsFile, s: ShardedFile, t: Tensor, a: AwkwardArray, device: GPUDeviceLike): Promise<void> {
  // open: the generic overload, the `shards` overload, and the nested cache options.
  await open(url, { concurrency: 4 })
  // @ts-expect-error misspelt: concurency
  await open(url, { concurency: 4 })
  await open(bytes, { shards, concurrency: 4 })
  // @ts-expect-error misspelt: concurency
  await open(bytes, { shards, concurency: 4 })
  await open(url, { cache: { maxAge: 60 } })
  // @ts-expect-error misspelt: maxAg
  await open(url, { cache: { maxAge: 60, maxAg: 60 } })
  await open(url, { requestInit: { credentials: 'include' } })
  // @ts-expect-error misspelt: credential
  await open(url, { requestInit: { credential: 'include' } })
  await openFile(url, { initialFetchSize: 1024 })
  // @ts-expect-error misspelt: initalFetchSize
  await openFile(url, { initalFetchSize: 1024 })
  await openSharded(url, { token: 'hf_x' })
  // @ts-expect-error misspelt: tokn
  await openSharded(url, { tokn: 'hf_x' })
  await openSharded(bytes, { shards, endpoint: 'https://hub.example' })
  // @ts-expect-error misspelt: endpont
  await openSharded(bytes, { shards, endpont: 'https://hub.example' })
  await urlSource(url, { retries: 1 })
  // @ts-expect-error misspelt: retry
  await urlSource(url, { retry: 1 })

  // Reading: ReadOptions, chunks and stats (intersections), digest, toGPU, dequantize.
  await f.tensor('w', { mergeGap: 0 })
  // @ts-expect-error misspelt: mergegap
  await f.tensor('w', { mergegap: 0 })
  await f.load(['w'], { signal })
  // @ts-expect-error misspelt: singal
  await f.load(['w'], { singal: signal })
  await f.slice('w', '0', { concurrency: 2 })
  // @ts-expect-error misspelt: concurency
  await f.slice('w', '0', { concurency: 2 })
  f.chunks('w', { chunkBytes: 1024, slice: '0' })
  // @ts-expect-error misspelt: chunkSize
  f.chunks('w', { chunkSize: 1024, slice: '0' })
  s.chunks('w', { slice: '0' })
  // @ts-expect-error misspelt: slices
  s.chunks('w', { slices: '0' })
  await f.stats('w', { bins: 8 })
  // @ts-expect-error misspelt: bin
  await f.stats('w', { bin: 8 })
  await s.stats('w', { bins: 8, chunkBytes: 1024 })
  // @ts-expect-error misspelt: chunkbytes
  await s.stats('w', { bins: 8, chunkbytes: 1024 })
  await f.digest('w', { chunkBytes: 1024 })
  // @ts-expect-error misspelt: chunk
  await f.digest('w', { chunk: 1024 })
  await f.toGPU(device, ['w'], { dtype: 'F16', usage: 0x80 })
  // @ts-expect-error misspelt: usages
  await f.toGPU(device, ['w'], { dtype: 'F16', usages: 0x80 })
  await f.dequantize('w', { slice: [0, 4] })
  // @ts-expect-error misspelt: rows
  await f.dequantize('w', { rows: [0, 4] })
  await a.toList({ signal })
  // @ts-expect-error misspelt: sigal
  await a.toList({ sigal: signal })

  // A sharded set: loadHeaders and the calls that load every header, info, shard.
  await s.loadHeaders({ concurrency: 4 })
  // @ts-expect-error misspelt: concurency
  await s.loadHeaders({ concurency: 4 })
  await s.parameterCount({ onProgress: () => {} })
  // @ts-expect-error misspelt: onprogress
  await s.parameterCount({ onprogress: () => {} })
  await s.quantized({ signal })
  // @ts-expect-error misspelt: abort
  await s.quantized({ abort: signal })
  await s.info('w', { signal })
  // @ts-expect-error misspelt: signals
  await s.info('w', { signals: signal })
  await s.shard('a.safetensors', { signal })
  // @ts-expect-error misspelt: sginal
  await s.shard('a.safetensors', { sginal: signal })

  // Tensors and casting (the generic dtype picks the type of `into`).
  t.stats({ bins: 4 })
  // @ts-expect-error misspelt: buckets
  t.stats({ buckets: 4 })
  t.toFloat32({ into: new Float32Array(4) })
  // @ts-expect-error misspelt: out
  t.toFloat32({ out: new Float32Array(4) })
  await castTensor(t, 'F32', { into: new Float32Array(4) })
  // @ts-expect-error misspelt: inot
  await castTensor(t, 'F32', { inot: new Float32Array(4) })

  // Writing: serialize, serializeStream, writeFile (an intersection), writeAwkward.
  const tensors = { w: { dtype: 'F32' as const, shape: [1], data: new Float32Array(1) } }
  await serialize(tensors, { metadata: { format: 'pt' } })
  // @ts-expect-error misspelt: metdata
  await serialize(tensors, { metdata: { format: 'pt' } })
  await serializeStream(tensors, { metadata: null })
  // @ts-expect-error misspelt: meta
  await serializeStream(tensors, { meta: null })
  await writeFile('out.safetensors', tensors, { metadata: { format: 'pt' }, signal })
  // @ts-expect-error misspelt: onProgres
  await writeFile('out.safetensors', tensors, { metadata: { format: 'pt' }, onProgres: () => {} })
  await writeAwkward('out.safetensors', [[1]], { signal })
  // @ts-expect-error misspelt: signl
  await writeAwkward('out.safetensors', [[1]], { signl: signal })

  // An error of one's own: its details.
  void new SafetensorsError('HttpError', 'no', { status: 500 })
  // @ts-expect-error misspelt: stauts
  void new SafetensorsError('HttpError', 'no', { stauts: 500 })
}
