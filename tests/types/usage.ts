// Compiled by `tsc --strict` in the tests (tests/tsconfig.json): the public types must accept
// typical use of every export, give each result its documented type, and refuse what the code
// refuses. Nothing here runs. tests/js/types-in-step.test.js checks that this file imports every
// name js/node.d.ts exports, so a new export needs a use here.
import {
  AwkwardArray, DTYPES, ERROR_CODES, ERROR_INFO, SafetensorsError, SafetensorsFile, ShardedFile, Tensor,
  blobSource, bytesSource, castTensor, fromValues, nodeFileSource, open, openFile, openSharded, serialize, serializeAwkward, serializeStream,
  urlSource, writeAwkward, writeFile,
  type AwkwardNode, type AwkwardTensors, type ByteSource, type Dtype, type ErrorCode, type HttpOptions, type OpenOptions,
  type LoadHeadersOptions, type Opened, type Progress, type ReadOptions, type Shape, type ShardSource, type ShardSources, type ShardTensorInfo,
  type SliceSpec, type Source, type Stats, type TensorInfo, type TensorLike, type TensorsInput, type TypedData,
  type UrlSource, type WriteOptions, type QuantScheme, type QuantizedWeight, type DequantizeOptions,
  type ParameterCount, type Chunk, type ChunkOptions, type GPUBufferLike, type GPUDeviceLike, type GPUUploadOptions,
  type CacheOptions, type CastData, type MaybeFloat16Array,
} from 'safetensors-wasm'

/** True only when A and B are the same type (not merely assignable either way). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false
function expectType<A, B>(_proof: Equal<A, B>): void {}

export async function example(bytes: Uint8Array): Promise<number> {
  const f = await open(bytes)
  const info: TensorInfo = f.info(f.names[0])
  const held: boolean = f.has('x')
  const noShard: null = f.shardOf(f.names[0])
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
  const g: ShardedFile = await open(await index.arrayBuffer(), { shards: byName, maxIndexBytes: 1 << 30 })
  return [...f.shards, ...g.names]
}

// ---- What `open` gives, by source ----

export async function openedTypes(path: string, url: URL, blob: Blob, source: ByteSource): Promise<void> {
  const f1 = await open('model.safetensors')
  expectType<typeof f1, SafetensorsFile>(true)
  const f2 = await open('https://example.org/model.safetensors.index.json')
  expectType<typeof f2, ShardedFile>(true)
  const f3 = await open('hf://org/repo', { token: 'hf_x', endpoint: 'https://hub.example' })
  expectType<typeof f3, SafetensorsFile | ShardedFile>(true)
  const f4 = await open('hf://org/repo@main/model.safetensors')
  expectType<typeof f4, SafetensorsFile>(true)
  const f5 = await open('hf://datasets/org/repo/model.safetensors.index.json')
  expectType<typeof f5, ShardedFile>(true)
  const f6 = await open(path)  // a string the type system cannot see the end of
  expectType<typeof f6, SafetensorsFile | ShardedFile>(true)
  const f7 = await open(url)
  expectType<typeof f7, SafetensorsFile | ShardedFile>(true)
  const f8 = await open(blob)
  expectType<typeof f8, SafetensorsFile>(true)
  const f9 = await open(source)
  expectType<typeof f9, SafetensorsFile>(true)
  expectType<Opened<'a.safetensors'>, SafetensorsFile>(true)
  expectType<Opened<ArrayBuffer>, SafetensorsFile>(true)
  const src: Source = Math.random() > 0.5 ? url : new Uint8Array(8)
  const f10 = await open(src)
  expectType<typeof f10, SafetensorsFile | ShardedFile>(true)
  // A file or a set: narrowed by instanceof, both read tensors the same way.
  const g = f3 instanceof ShardedFile ? await f3.shard(f3.shards[0]) : f3
  const h: SafetensorsFile = g
  // Using-declarations close files and free tensors.
  await using closed = f1
  using tensor = await closed.tensor(closed.names[0])
  // @ts-expect-error files come from open(), not from a constructor
  void new SafetensorsFile()
  // @ts-expect-error tensors come from reads
  void new Tensor()
  void [f2, f4, f5, f6, f7, f8, f9, f10, h, tensor]
}

// ---- One kind: openFile and openSharded give one class whatever the string ----

export async function oneKind(path: string, url: URL, index: File, files: Map<string, File>): Promise<Dtype> {
  const f = await openFile(path)
  expectType<typeof f, SafetensorsFile>(true)
  // info() of one file is synchronous, not a union with a promise.
  const dtype: Dtype = (await openFile(path)).info('x').dtype
  // @ts-expect-error a SafetensorsFile's info() gives a TensorInfo, not a promise
  void (await openFile(path)).info('x').then
  const s = await openSharded(url, { concurrency: 8 })
  expectType<typeof s, ShardedFile>(true)
  const where: ShardTensorInfo = await s.info('x')
  const local = await openSharded(index, { shards: files })
  expectType<typeof local, ShardedFile>(true)
  // @ts-expect-error an index's content opens with its shards
  await openSharded(index)
  // @ts-expect-error openFile opens one file: it takes no shards
  await openFile(index, { shards: files })
  void [where, local]
  return dtype
}

export async function openOptions(signal: AbortSignal, token: string): Promise<void> {
  const http: HttpOptions = {
    fetch: (input, init) => fetch(input, init),
    headers: { Authorization: `Bearer ${token}` },
    requestInit: { credentials: 'include' },
    signal,
    onProgress: (p: Progress) => void (p.loaded / p.total),
    initialFetchSize: 1 << 16,
    concurrency: 8,
    mergeGap: 1 << 20,
    retries: 2,
    retryDelay: 100,
    allowFullDownload: true,
    wholeFileThreshold: 1 << 23,
    ifRange: false,
  }
  const options: OpenOptions = { ...http, endpoint: 'https://huggingface.co', token }
  await open('hf://org/repo', options)
  // The cache: on with its defaults, or where and how long.
  await open('https://example.org/model.safetensors', { cache: true })
  const cache: CacheOptions = { dir: '/tmp/st-cache', name: 'my-app', maxAge: 300, ranges: true }
  await open('hf://org/repo', { ...options, cache })
  // @ts-expect-error maxAge is a number of seconds
  await open('https://example.org/model.safetensors', { cache: { maxAge: '5m' } })
  // @ts-expect-error a misspelt option is refused, not ignored
  await open('a.safetensors', { onProgres: () => {} })
}

// ---- Errors ----

/** Every code is handled: a code added to ErrorCode without a case here fails to compile. */
export function advice(code: ErrorCode): string {
  switch (code) {
    case 'HeaderTooSmall':
    case 'HeaderTooLarge':
    case 'InvalidHeaderLength':
    case 'InvalidHeader':
    case 'InvalidHeaderDeserialization':
    case 'InvalidOffset':
    case 'ValidationOverflow':
    case 'MisalignedSlice':
    case 'TensorInvalidInfo':
    case 'MetadataIncompleteBuffer':
    case 'NotSafetensors':
      return 'not a valid safetensors file'
    case 'TensorNotFound':
    case 'TooManySlices':
    case 'SliceOutOfRange':
    case 'InvalidSlice':
    case 'InvalidArgument':
    case 'UnsupportedDtype':
    case 'NonFinite':
    case 'OutOfRange':
    case 'InvalidSource':
      return 'a wrong request'
    case 'UnsupportedSource':
    case 'NotFound':
    case 'IoError':
      return 'no such file'
    case 'HttpError':
    case 'NetworkError':
    case 'ContentEncoded':
    case 'InvalidContentRange':
    case 'RangeNotSupported':
    case 'RangeNotSatisfiable':
    case 'SourceChanged':
    case 'ShortRead':
      return 'the server or the network'
    case 'Aborted':
    case 'Closed':
    case 'Disposed':
    case 'OutOfMemory':
      return 'the lifetime of a read'
    case 'InvalidIndex':
    case 'UnsafeShardPath':
    case 'ShardMissing':
    case 'IndexMismatch':
    case 'KindMismatch':
      return 'a sharded set'
    case 'AwkwardInvalidMetadata':
    case 'AwkwardInvalidForm':
    case 'AwkwardUnsupportedType':
    case 'AwkwardMissingBuffer':
    case 'AwkwardDtypeMismatch':
    case 'AwkwardBufferTooShort':
    case 'AwkwardDecreasingOffsets':
    case 'AwkwardOutOfBounds':
    case 'AwkwardIndexOutOfRange':
    case 'AwkwardFieldNotFound':
      return 'an awkward array'
    case 'DeviceLimitExceeded':
      return 'a GPU device'
    case 'DigestMismatch':
      return 'a download'
    case 'QuantPartMissing':
    case 'QuantPartInvalid':
    case 'QuantIndexOutOfRange':
    case 'QuantStateInvalid':
    case 'QuantConfigMismatch':
    case 'NotQuantized':
    case 'UnsupportedQuantization':
      return 'a quantized weight'
    default: {
      const unhandled: never = code
      return unhandled
    }
  }
}

export function errors(e: unknown): string | null {
  if (!(e instanceof SafetensorsError)) return null
  const code: ErrorCode = e.code
  const status: number | null = e.status
  const body: string | null = e.body
  const where: string | null = e.tensor
  const offset: number | null = e.offset
  const { meaning, fix }: { meaning: string; fix: string } = ERROR_INFO[code]
  const all: readonly ErrorCode[] = ERROR_CODES
  // @ts-expect-error ERROR_CODES is frozen
  ERROR_CODES.push('HttpError')
  // @ts-expect-error not a code
  const bogus: ErrorCode = 'Bogus'
  const own = new SafetensorsError('ShardMissing', 'shard 2 is gone', { status: 404, body: 'Not Found', cause: e, tensor: null })
  // @ts-expect-error an error of this package has one of its codes
  void new SafetensorsError('Oops', 'no such code')
  return `${advice(code)} ${status} ${body} ${where} ${offset} ${meaning} ${fix} ${all.length} ${own.message} ${bogus}`
}

// ---- Reading ----

export async function reading(f: SafetensorsFile, s: ShardedFile, signal: AbortSignal): Promise<void> {
  const byteLength: number = f.byteLength
  const headerLength: number = f.headerLength
  const metadata: Record<string, string> | null = f.metadata
  const count: { total: number; byDtype: Partial<Record<Dtype, number>>; byScheme: Partial<Record<QuantScheme, number>> } = f.parameterCount()
  expectType<ParameterCount, ReturnType<SafetensorsFile['parameterCount']>>(true)
  const weights: QuantizedWeight[] = f.quantized()
  const q: DequantizeOptions = { slice: [0, -1], signal: AbortSignal.timeout(1000), onProgress: ({ loaded }) => void loaded }
  if (weights.length > 0) (await f.dequantize(weights[0].name, q)).dispose()
  const chunkOptions: ChunkOptions = { chunkBytes: 1 << 20, signal, onProgress: ({ loaded }) => void loaded }
  for await (const piece of f.chunks(f.names[0], { ...chunkOptions, slice: '0:2' })) {
    const c: Chunk = piece
    void c.offset
  }
  const hex: string = await f.digest()
  void hex
  expectType<Promise<Stats>, ReturnType<ShardedFile['stats']>>(true)
  const device = null as unknown as GPUDeviceLike
  const upload: GPUUploadOptions = { dtype: 'F16', usage: 0x80, ...chunkOptions }
  const buffers: Map<string, GPUBufferLike> = await s.toGPU(device, s.names, upload)
  void buffers
  const sharedQuantized: QuantizedWeight[] = await s.quantized({ signal, concurrency: 2 })
  void sharedQuantized
  const read: ReadOptions = { signal, onProgress: (p) => void p.loaded, mergeGap: 0, concurrency: 4 }
  const loaded: Map<string, Tensor> = await f.load(f.names.slice(0, 2), read)
  // Slices: strings, Numbers, BigInts (dimensions past 2^53), ranges with open ends.
  const specs: SliceSpec[] = ['0, 2:5', [0], [0n, [1n, null], null], [null, [-4, -1]], [[2n ** 60n, null]]]
  for (const spec of specs) (await f.slice('w', spec, read)).dispose()
  // @ts-expect-error a step is not a slice
  await f.slice('w', [[0, 8, 2]])

  const t = await f.tensor('w')
  const name: string = t.name
  const dtype: Dtype = t.dtype
  const shape: Shape = t.shape
  const dims: Array<number | bigint> = shape
  const data: TypedData = t.data
  const raw: Uint8Array = t.bytes
  const copy: TypedData = t.copy()
  const stats: Stats = t.stats()
  const histogram: number[] = stats.histogram.counts
  const sizes: [number, number, boolean] = [t.byteLength, t.elementCount, t.disposed]
  t[Symbol.dispose]()

  // A sharded set: info and counts are async there (shard headers are fetched on demand).
  const where: string = s.shardOf(s.names[0])
  const firstShardNames: string[] = s.namesIn(s.shards[0])
  const named: boolean = s.has(where)
  const shardInfo: ShardTensorInfo = await s.info(s.names[0], { signal })
  const shardPath: string = shardInfo.shard
  const one: SafetensorsFile = await s.shard(s.shards[0], { signal })
  await s.loadHeaders({ signal, concurrency: 2, onProgress: ({ loaded, total }) => void (loaded / total) })
  const headerOptions: LoadHeadersOptions = { concurrency: 300, onProgress: ({ loaded }) => void loaded }
  const total: number = (await s.parameterCount(headerOptions)).total
  const length: number | null = s.byteLength
  const indexMetadata: Record<string, unknown> | null = s.metadata
  const fromSet: Tensor = await s.tensor(s.names[0], read)
  const sliced: Tensor = await s.slice(s.names[0], [0n], read)
  const many: Map<string, Tensor> = await s.load(s.names, read)
  await s[Symbol.asyncDispose]()
  void [byteLength, headerLength, metadata, count, loaded, name, dtype, dims, data, raw, copy, histogram, sizes, where,
    shardPath, one, total, length, indexMetadata, fromSet, sliced, many]
}

// ---- Sources ----

export async function sources(buffer: ArrayBuffer, blob: Blob, path: string): Promise<void> {
  const fromBytes: ByteSource = bytesSource(buffer)
  const fromView: ByteSource = bytesSource(new Float32Array(4))
  const fromBlob: ByteSource = blobSource(blob)
  const fromFile: ByteSource = await nodeFileSource(path)
  const remote: UrlSource = await urlSource(new URL('https://example.org/a.safetensors'), { retries: 1 })
  const finalUrl: string = remote.finalUrl                // after redirects
  const asked: string = remote.url
  const response: { status: number; contentType: string | null } = remote.response
  const cached: number = remote.cachedBytes
  remote.releaseCache()
  remote.close()
  // A ByteSource of one's own: only byteLength and read are required.
  const own: ByteSource = {
    byteLength: 16,
    read: async (offset, length, options) => {
      options?.signal?.throwIfAborted()
      return new Uint8Array(length).fill(offset)
    },
    async* stream(offset, length) { yield new Uint8Array(length).fill(offset) },
    describe: 'zeros',
  }
  const shard: ShardSource = own
  const shards: ShardSources = { 'a.safetensors': shard, 'b.safetensors': path, 'c.safetensors': blob }
  const byFunction: ShardSources = (p: string) => (p.startsWith('a') ? fromBytes : null)
  await open(new Uint8Array(8), { shards })
  await open(new Uint8Array(8), { shards: byFunction })
  await open(await urlSource('https://example.org/a.safetensors'))
  void [fromView, fromBlob, fromFile, finalUrl, asked, response, cached, response.status]
}

// ---- Writing ----

export async function writing(t: Tensor, signal: AbortSignal): Promise<void> {
  const like: TensorLike = { dtype: 'BF16', shape: [2, 3n], data: new Uint16Array(6) }
  const inputs: TensorsInput[] = [
    { a: like },
    new Map<string, TensorLike | Tensor>([['a', like], ['b', t]]),
    [['a', like]],
    [t],
  ]
  const options: WriteOptions = { metadata: new Map([['format', 'pt']]) }
  for (const input of inputs) {
    const bytes: Uint8Array = await serialize(input, options)
    const stream: ReadableStream<Uint8Array> = await serializeStream(input, { metadata: { format: 'pt' } })
    void [bytes, stream]
  }
  await serialize({ a: like }, { metadata: null })
  // @ts-expect-error metadata values are strings
  await serialize({ a: like }, { metadata: { n: 1 } })
  // @ts-expect-error not a dtype
  await serialize({ a: { dtype: 'F8', shape: [1], data: new Uint8Array(1) } })
  await writeFile('out.safetensors', { a: like }, { metadata: { format: 'pt' }, signal, onProgress: (p) => void p.total })
  const dtypes: readonly Dtype[] = DTYPES

  // Casting: the result's data follows the target dtype.
  const f32 = await castTensor(t, 'F32')
  expectType<typeof f32, { dtype: 'F32'; shape: Shape; data: Float32Array }>(true)
  const bf16 = await castTensor(like, 'BF16')
  const reused: Float32Array = (await castTensor(t, 'F32', { into: new Float32Array(t.elementCount) })).data
  void reused
  const halves: Uint16Array = bf16.data
  expectType<CastData<'BF16'>, Uint16Array>(true)
  // F16: a Float16Array where the platform has it (and the lib declares it), else a Uint16Array.
  const f16: CastData<'F16'> = (await castTensor(t, 'F16')).data
  const f16Either: Uint16Array | MaybeFloat16Array = f16
  void f16Either
  // @ts-expect-error castTensor casts to F32, BF16 or F16 only
  await castTensor(t, 'F64')
  await serialize({ bf16 })
  void [dtypes, halves]
}

// ---- Awkward arrays ----

export async function awkward(f: SafetensorsFile, signal: AbortSignal): Promise<unknown[]> {
  const a: AwkwardArray = await f.awkward()
  const length: number = a.length
  const type: string = a.type
  const form: Record<string, unknown> = a.form
  const fields: string[] = a.fields
  const nodes: AwkwardNode[] = a.nodes
  const buffers: Record<string, string> = nodes[0].buffers
  const first: unknown = await a.at(0, { signal })
  const some: AwkwardArray = a.slice(1, -1).field('x')
  const values: unknown[] = await some.toList()
  a[Symbol.dispose]()

  const { tensors, metadata }: { tensors: AwkwardTensors; metadata: { form: string; length: string } } = fromValues([{ x: 1 }, null])
  const bytes: Uint8Array = await serialize(tensors, { metadata })
  const direct: Uint8Array = await serializeAwkward([[1, 2], [], [3]])
  await writeAwkward('ragged.safetensors', [[1, 2], [3]], { onProgress: (p) => void p.loaded, signal })
  void [length, type, form, fields, buffers, first, bytes, direct]
  return values
}
