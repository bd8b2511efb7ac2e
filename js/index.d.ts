// Types for safetensors-wasm (browser and generic entry). Hand-written; checked by tsc in the
// tests against the JSDoc-annotated sources.

export type Dtype =
  | 'BOOL' | 'F4' | 'F6_E2M3' | 'F6_E3M2' | 'U8' | 'I8' | 'F8_E5M2' | 'F8_E4M3' | 'F8_E8M0'
  | 'F8_E4M3FNUZ' | 'F8_E5M2FNUZ' | 'I16' | 'U16' | 'F16' | 'BF16' | 'I32' | 'U32' | 'F32'
  | 'C64' | 'F64' | 'I64' | 'U64'

export declare const DTYPES: readonly Dtype[]

/**
 * Dimensions are Numbers; a dimension above 2^53 (possible only in a zero-size tensor, whose
 * other dimension is 0) is a BigInt rather than a rounded Number.
 */
export type Shape = Array<number | bigint>

/** Every code a SafetensorsError of this package can have (ERROR_CODES lists them at run time). */
export type ErrorCode =
  | 'HeaderTooSmall'
  | 'HeaderTooLarge'
  | 'InvalidHeaderLength'
  | 'InvalidHeader'
  | 'InvalidHeaderDeserialization'
  | 'InvalidOffset'
  | 'ValidationOverflow'
  | 'MisalignedSlice'
  | 'TensorInvalidInfo'
  | 'MetadataIncompleteBuffer'
  | 'TensorNotFound'
  | 'TooManySlices'
  | 'SliceOutOfRange'
  | 'InvalidSlice'
  | 'NotSafetensors'
  | 'UnsupportedSource'
  | 'NotFound'
  | 'IoError'
  | 'HttpError'
  | 'NetworkError'
  | 'ContentEncoded'
  | 'InvalidContentRange'
  | 'RangeNotSupported'
  | 'RangeNotSatisfiable'
  | 'SourceChanged'
  | 'ShortRead'
  | 'OutOfRange'
  | 'InvalidSource'
  | 'Aborted'
  | 'Closed'
  | 'Disposed'
  | 'OutOfMemory'
  | 'InvalidArgument'
  | 'UnsupportedDtype'
  | 'NonFinite'
  | 'InvalidIndex'
  | 'UnsafeShardPath'
  | 'ShardMissing'
  | 'IndexMismatch'
  | 'KindMismatch'
  | 'DeviceLimitExceeded'
  | 'DigestMismatch'
  | 'QuantPartMissing'
  | 'QuantPartInvalid'
  | 'QuantIndexOutOfRange'
  | 'QuantStateInvalid'
  | 'QuantConfigMismatch'
  | 'NotQuantized'
  | 'UnsupportedQuantization'
  | 'AwkwardInvalidMetadata'
  | 'AwkwardInvalidForm'
  | 'AwkwardUnsupportedType'
  | 'AwkwardMissingBuffer'
  | 'AwkwardDtypeMismatch'
  | 'AwkwardBufferTooShort'
  | 'AwkwardDecreasingOffsets'
  | 'AwkwardOutOfBounds'
  | 'AwkwardIndexOutOfRange'
  | 'AwkwardFieldNotFound'

/** Every code, frozen, in the order of the README's table. */
export declare const ERROR_CODES: readonly ErrorCode[]
/** What each code means and the usual fix. */
export declare const ERROR_INFO: Readonly<Record<ErrorCode, Readonly<{ meaning: string; fix: string }>>>

export declare class SafetensorsError extends Error {
  /** For ByteSources and tools of your own that fail the way this package does. URLs in the
   * message, the body and the causes' messages have passwords and query values masked (`***`). */
  constructor(code: ErrorCode, message: string,
    details?: { tensor?: string | null; offset?: number | null; status?: number | null; body?: string | null; cause?: unknown })
  /** The reference's variant name (InvalidOffset, TensorInvalidInfo, ...) or a transport or
   * API code (HttpError, RangeNotSupported, SourceChanged, Aborted, ShortRead, Disposed, ...). */
  readonly code: ErrorCode
  /** The tensor concerned, when there is one. */
  readonly tensor: string | null
  /** Absolute byte offset in the file where the problem sits, when known. */
  readonly offset: number | null
  /** The HTTP status of the answer the error comes from (HttpError, NotFound, ...), else null. */
  readonly status: number | null
  /** The first 200 characters of an HTTP error's text body (an S3 XML error, say), else null. */
  readonly body: string | null
}

export interface ByteSource {
  readonly byteLength: number
  /** Exactly `length` bytes from `offset`. */
  read(offset: number, length: number, options?: { signal?: AbortSignal }): Promise<Uint8Array>
  /** Writes [offset, offset + length) into viewAt(at, n) pieces; take a fresh view per piece. */
  readInto?(offset: number, length: number, viewAt: (at: number, n: number) => Uint8Array,
    options?: { signal?: AbortSignal }): Promise<void>
  /** The bytes of [offset, offset + length) as they arrive, in order. */
  stream?(offset: number, length: number, options?: { signal?: AbortSignal }): AsyncIterable<Uint8Array>
  close?(): Promise<void> | void
  defaultMergeGap?: number
  defaultConcurrency?: number
  describe?: string
}

export interface Progress { loaded: number; total: number }

/** Options of ShardedFile.loadHeaders, and of the calls that load every shard header. */
export interface LoadHeadersOptions {
  signal?: AbortSignal
  /** Shard headers fetched at once. */
  concurrency?: number
  /** Shards whose header is in, of all of them. */
  onProgress?: (progress: Progress) => void
}

export interface ReadOptions {
  signal?: AbortSignal
  onProgress?: (progress: Progress) => void
  /** Ranges closer than this many bytes are read as one request. */
  mergeGap?: number
  /** Requests in flight at once. */
  concurrency?: number
}

/**
 * Options for URLs (ranged HTTP reading). Defaults: initialFetchSize 256 KiB, mergeGap 512 KiB,
 * concurrency 64, retries 3 (retryDelay 250 ms, doubling), idleTimeout 30 s, wholeFileThreshold
 * 8 MiB. Each is checked at open: integers (retryDelay: any finite number; idleTimeout: any
 * number over 0, Infinity for none) with concurrency 1 to 65536, retries 0 to 100, retryDelay 0
 * to 60,000, initialFetchSize from 1, the others from 0; else InvalidArgument naming the option.
 */
export interface HttpOptions {
  /** The fetch to use (default: globalThis.fetch): a proxy, a mock, an instrumented fetch. */
  fetch?: (input: string, init: RequestInit) => Promise<Response>
  /** Sent with every request, e.g. { Authorization: 'Bearer hf_...' }. (The DOM's HeadersInit,
   * spelt out: a Node project compiles without the DOM lib.) */
  headers?: Headers | Record<string, string> | [string, string][]
  /** Spread into every request (credentials, cache, mode...); method and signal are ours. */
  requestInit?: RequestInit
  /** Aborts opening (the first request, the header and, for an index, the index itself). */
  signal?: AbortSignal
  /** The bytes `open` itself fetches (the first request, the rest of a large header, an index)
   * as they arrive; `total` grows when the header turns out longer than the first request. */
  onProgress?: (progress: Progress) => void
  /** P: the first request asks for bytes 0..P-1 (at least 8). The header of most files fits.
   * Unset, a shard of a sharded set asks for more when the index tells its header is longer. */
  initialFetchSize?: number
  /** Default for reads: requests in flight at once. */
  concurrency?: number
  /** Default for reads: ranges closer than this many bytes are one request. */
  mergeGap?: number
  /** Retries of a transient failure (network error, 408, 429, 5xx, a body cut short) per read. */
  retries?: number
  /** First backoff in ms, doubled per retry (capped at 8 s, jittered); a longer Retry-After
   * (up to 60 s; longer is HttpError at once) wins, a shorter one or 0 does not shorten it. */
  retryDelay?: number
  /** A request that gets no byte for this many ms (no headers, or a body that stalls) fails as a
   * transient failure and is retried: NetworkError, or ShortRead mid-body, when the retries run
   * out. Default 30000; Infinity for none. Only waits count, not a reader busy with a chunk. */
  idleTimeout?: number
  /** Told what the reader works around, at most once a file: a CDN URL signed for one byte
   * range only, read through the original URL instead. Default: console.warn. */
  onWarning?: (message: string) => void
  /** A server that ignores Range on a file over wholeFileThreshold: read it anyway, each read
   * streaming from the start of the file (default false: RangeNotSupported). */
  allowFullDownload?: boolean
  /** A server that ignores Range: files up to this many bytes are kept whole in memory. */
  wholeFileThreshold?: number
  /** Send a strong ETag as If-Range (default: true, except cross-origin in a browser, where
   * it would cost a CORS preflight; validators are compared on every response either way). */
  ifRange?: boolean
}

/**
 * Where and how long the `cache` option of `open` keeps what opening remote files costs. Entries
 * are keyed by the URL as given and its strong ETag (a URL without one is not cached).
 */
export interface CacheOptions {
  /** Node: the folder (default `safetensors-wasm` under $XDG_CACHE_HOME, else ~/.cache,
   * ~/Library/Caches on macOS, %LOCALAPPDATA% on Windows). Refused (InvalidArgument) when it is
   * a symbolic link, another user's, or writable by group or others. */
  dir?: string
  /** Browsers: the Cache API cache's name (default 'safetensors-wasm'). */
  name?: string
  /** Seconds after a validation during which an entry is served without any request (default
   * 0: every open validates, so a changed file is never served). An entry stored with
   * credentials is validated on every open. */
  maxAge?: number
  /** Keep the tensor byte ranges read too, not only headers and indexes (default false). */
  ranges?: boolean
}

export interface OpenOptions extends HttpOptions {
  /**
   * Keep the headers and indexes of remote files between calls (the Cache API in browsers, a
   * folder in Node): reopening costs one request per file (`If-None-Match`, answered 304), or
   * none within `maxAge`. A file that changed is read anew and its entry replaced; an entry
   * whose stored bytes fail their SHA-256 (edited, truncated, another URL's) is dropped and the
   * file read from the server. Default off.
   */
  cache?: boolean | CacheOptions
  /** For hf:// addresses: the Hub (default https://huggingface.co; Node: HF_ENDPOINT). */
  endpoint?: string
  /** For hf:// addresses: sent as `Authorization: Bearer` to the endpoint only (Node: HF_TOKEN). */
  token?: string
  /** Opens `src`, an index's content, as a sharded set whose shards the caller holds. */
  shards?: ShardSources
  /**
   * A sharded set: the longest index accepted, in bytes (default 64 MiB); a longer one is
   * InvalidIndex, refused before it is read when its length is known (else when the bytes
   * read pass it: up to about 4 times this in memory). A shard given as the
   * index fails at its first bytes whatever this says.
   */
  maxIndexBytes?: number
  /**
   * The model's `quantization_config` (from its config.json), or the whole config.json object.
   * Optional: quantized weights are found from names, dtypes and shapes; with it, the values it
   * fixes (block size, bits, group size, format) are used and checked against the tensors.
   */
  quantization?: Record<string, unknown>
}

/** How a quantized weight is stored (docs/quantized.md). */
export type QuantScheme = 'fp8-block' | 'fp8' | 'int8' | 'mxfp4' | 'nvfp4' | 'gptq' | 'awq' | 'bnb-nf4' | 'bnb-fp4' | 'ct-pack'

/** A quantized weight: its logical name and shape, and the stored tensors it is made of. */
export interface QuantizedWeight {
  /** `<module>.weight`; for MXFP4 (gpt-oss), the stored name without `_blocks`. */
  name: string
  scheme: QuantScheme
  /** The logical shape: nn.Linear's [out, in] for 2-D weights; MXFP4 the stored [..., groups * 32]. */
  shape: number[]
  /** Each role (weight, scaleInv, scale, zeroPoint, inputScale, blocks, scales, packed, qweight, qzeros, gIdx, absmax, ...) to its stored tensor. */
  parts: Record<string, string>
  /** The numbers the decoding uses: block, strategy, bits, group, symmetric, format, blocksize, nested... */
  details: Record<string, unknown>
}

export interface DequantizeOptions {
  /** Rows [start, stop] of the leading logical dimension (negatives count from the end, null the bound). */
  slice?: [number | null, number | null] | [number | null]
  signal?: AbortSignal
  /** Stored bytes read so far, of the total the call reads. */
  onProgress?: (progress: Progress) => void
}

/** The parts of WebGPU's GPUDevice that toGPU uses (a GPUDevice is one). */
export interface GPUDeviceLike {
  createBuffer(descriptor: { size: number; usage: number; mappedAtCreation?: boolean; label?: string }): GPUBufferLike
  queue: { writeBuffer(buffer: GPUBufferLike, offset: number, data: ArrayBufferView, dataOffset?: number, size?: number): void }
  limits: { maxBufferSize: number; maxStorageBufferBindingSize: number }
}
/** A GPUBuffer, as far as this package's types go. */
export interface GPUBufferLike {
  readonly size: number
  destroy(): void
}

export interface ChunkOptions {
  /** Bytes per piece (rounded down to whole elements); default 4 MiB. Two pieces at most are in the heap. */
  chunkBytes?: number
  signal?: AbortSignal
  onProgress?: (progress: Progress) => void
}

/** A piece of a tensor: `data` views the wasm heap until the next step; `offset` is data[0]'s byte offset. */
export interface Chunk {
  offset: number
  data: TypedData
}

export interface GPUUploadOptions extends ChunkOptions {
  /** Keep the stored bytes (default), or convert (dequantize, for quantized weights) on the way. */
  dtype?: 'F32' | 'F16'
  /** GPUBufferUsage flags; default STORAGE | COPY_DST | COPY_SRC. */
  usage?: number
}

export interface ParameterCount {
  total: number
  /** Plain tensors, by dtype. */
  byDtype: Partial<Record<Dtype, number>>
  /** Quantized weights, by their logical elements; their parts count zero. */
  byScheme: Partial<Record<QuantScheme, number>>
}

/** A shard given to `open` with `shards`: anything `open` takes for one file (in Node, a path too). */
export type ShardSource = string | URL | Blob | ArrayBuffer | ArrayBufferView | ByteSource
/** Each shard the index names, by its path in the index: an object or Map, or a function of the
 * path. A shard without a source is refused (NotFound) before any shard is read. */
export type ShardSources = Record<string, ShardSource> | Map<string, ShardSource> |
  ((path: string) => ShardSource | null | undefined)

export interface TensorInfo {
  name: string
  dtype: Dtype
  shape: Shape
  /** Absolute offset of the tensor's first byte in the file. */
  byteOffset: number
  byteLength: number
}

export interface Stats {
  count: number
  finiteCount: number
  nanCount: number
  infCount: number
  zeroCount: number
  min: number
  max: number
  mean: number
  /** Population standard deviation of the finite values. */
  std: number
  histogram: { min: number; max: number; counts: number[] }
}

/**
 * Float16Array when the compilation's lib declares it (TypeScript's `esnext.float16`), else
 * never: F16 values come as a Float16Array where the platform has one, else as a Uint16Array.
 */
export type MaybeFloat16Array = typeof globalThis extends { Float16Array: { prototype: infer A } } ? A : never

export type TypedData =
  | Float32Array | Float64Array | Uint16Array | Int16Array | Int32Array | Uint32Array
  | BigInt64Array | BigUint64Array | Int8Array | Uint8Array | MaybeFloat16Array

export declare class Tensor {
  /** Made by a read (tensor, load, slice), never with `new`: the constructor takes internal state. */
  private constructor()
  readonly name: string
  readonly dtype: Dtype
  readonly shape: Shape
  readonly byteLength: number
  readonly elementCount: number
  readonly disposed: boolean
  /**
   * A typed view over wasm memory: Float32Array (F32, C64 interleaved), Float64Array,
   * Float16Array where the platform has it else Uint16Array (F16), Uint16Array (BF16, U16),
   * Int16Array, Int32Array, Uint32Array, BigInt64Array (I64), BigUint64Array (U64), Int8Array,
   * Uint8Array (U8, BOOL, F8_*, packed F4 and F6). Made anew on each access, so it is right
   * after the heap grows; a view kept across an allocation is detached and reads as empty.
   */
  readonly data: TypedData
  /** The raw bytes as a view over wasm memory (same lifetime rules as `data`). */
  readonly bytes: Uint8Array
  /** A copy of `data` in JS memory. */
  copy(): TypedData
  /** Values as float32, converted in C++ (all dtypes but F6); `into` reuses the caller's array (its length must match). */
  toFloat32(options?: { into?: Float32Array }): Float32Array
  stats(options?: { bins?: number }): Stats
  /** Frees the wasm memory; later use throws SafetensorsError('Disposed'). */
  dispose(): void
  [Symbol.dispose](): void
}

export type SliceSpec = string | Array<number | bigint | [number | bigint | null, number | bigint | null] | null>

export declare class SafetensorsFile {
  /** Made by open(), never with `new`: the constructor takes internal state. */
  private constructor()
  readonly byteLength: number
  readonly headerLength: number
  readonly metadata: Record<string, string> | null
  /** Tensor names in file (offset) order. */
  readonly names: string[]
  info(name: string): TensorInfo
  /** Whether the file holds a tensor of that name. */
  has(name: string): boolean
  /** As ShardedFile.shardOf: null, a single file having no shards (TensorNotFound if absent). */
  shardOf(name: string): null
  parameterCount(): ParameterCount
  /** The quantized weights (plain tensors are not listed); throws the first inconsistency. */
  quantized(): QuantizedWeight[]
  /** A quantized weight's values as float32, in its logical shape. */
  dequantize(name: string, options?: DequantizeOptions): Promise<Tensor>
  /** The tensor's bytes (or a slice's) piece by piece through two heap buffers: any size, bounded heap. */
  chunks(name: string, options?: ChunkOptions & { slice?: SliceSpec }): AsyncGenerator<Chunk, void, undefined>
  /** Tensor.stats of a tensor or a quantized weight, streamed (never whole in the heap). */
  stats(name: string, options?: ChunkOptions & { bins?: number; slice?: SliceSpec }): Promise<Stats>
  /** SHA-256 (hex) of a tensor's bytes, or with no name of the whole file (the Hub's LFS oid). */
  digest(name?: string, options?: ChunkOptions): Promise<string>
  /** Uploads each tensor to a GPUBuffer, streamed through the heap into queue.writeBuffer. */
  toGPU(device: GPUDeviceLike, names: Iterable<string>, options?: GPUUploadOptions): Promise<Map<string, GPUBufferLike>>
  tensor(name: string, options?: ReadOptions): Promise<Tensor>
  load(names: Iterable<string>, options?: ReadOptions): Promise<Map<string, Tensor>>
  /** Reads only the slice's bytes. '0, 2:5' or [0, [2, 5]]; negative values count from the end. */
  slice(name: string, spec: SliceSpec, options?: ReadOptions): Promise<Tensor>
  /** The awkward array stored by ak.to_safetensors: checks form and buffers, reads no data. */
  awkward(): Promise<AwkwardArray>
  close(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}

export interface ShardTensorInfo extends TensorInfo {
  /** The shard's path as the index writes it; byteOffset is within that shard. */
  shard: string
}

/**
 * A sharded checkpoint opened from its `*.index.json`. Names come from the index alone; a
 * shard's header is fetched the first time one of its tensors (or its info) is needed.
 */
export declare class ShardedFile {
  /** Made by open(), never with `new`: the constructor takes internal state. */
  private constructor()
  /** The index's "metadata" object as written (e.g. { total_size: 4305 }), or null. */
  readonly metadata: Record<string, unknown> | null
  /** Tensor names, grouped by shard (shards in path order), in index order within a shard. */
  readonly names: string[]
  /** Shard paths relative to the index, sorted. */
  readonly shards: string[]
  /** Sum of the shard files' lengths once every shard header is loaded, else null. */
  readonly byteLength: number | null
  /** The shard path of a tensor, from the index. */
  shardOf(name: string): string
  /** The index's names in one shard, in index order (the run of `names` that shard holds); NotFound for another path. */
  namesIn(path: string): string[]
  /** Whether the index names a tensor of that name. */
  has(name: string): boolean
  /** A shard as a SafetensorsFile (its own header, metadata and byteLength). */
  shard(path: string, options?: { signal?: AbortSignal }): Promise<SafetensorsFile>
  /**
   * Fetches every shard header not fetched yet, `concurrency` at a time (by default the
   * `concurrency` given to open, else 256 in Node and 32 in browsers). `onProgress` counts shards.
   * Each header is matched to the index's names as it arrives (the names are decoded then, as
   * `names` would), so that counts and detection afterwards start at once.
   */
  loadHeaders(options?: LoadHeadersOptions): Promise<void>
  info(name: string, options?: { signal?: AbortSignal }): Promise<ShardTensorInfo>
  /**
   * Fetches every shard header. Quantized weights are detected once (shared with quantized()),
   * a block of names a task; a close meanwhile rejects with `Closed`.
   */
  parameterCount(options?: LoadHeadersOptions): Promise<ParameterCount>
  /** Fetches every shard header; a weight's parts may sit in different shards. */
  quantized(options?: LoadHeadersOptions): Promise<QuantizedWeight[]>
  /** Fetches only the headers of the shards that hold the weight's parts. */
  dequantize(name: string, options?: DequantizeOptions): Promise<Tensor>
  /** The tensor's bytes (or a slice's) piece by piece through two heap buffers: any size, bounded heap. */
  chunks(name: string, options?: ChunkOptions & { slice?: SliceSpec }): AsyncGenerator<Chunk, void, undefined>
  /** Tensor.stats of a tensor or a quantized weight, streamed (never whole in the heap). */
  stats(name: string, options?: ChunkOptions & { bins?: number; slice?: SliceSpec }): Promise<Stats>
  /** SHA-256 (hex) of a tensor's bytes; a shard's whole file: (await f.shard(path)).digest(). */
  digest(name: string, options?: ChunkOptions): Promise<string>
  /** Uploads each tensor to a GPUBuffer, streamed through the heap into queue.writeBuffer. */
  toGPU(device: GPUDeviceLike, names: Iterable<string>, options?: GPUUploadOptions): Promise<Map<string, GPUBufferLike>>
  tensor(name: string, options?: ReadOptions): Promise<Tensor>
  /** Grouped by shard; on failure every tensor already read is disposed. */
  load(names: Iterable<string>, options?: ReadOptions): Promise<Map<string, Tensor>>
  slice(name: string, spec: SliceSpec, options?: ReadOptions): Promise<Tensor>
  close(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}

export type Source = string | URL | Blob | ArrayBuffer | ArrayBufferView | ByteSource

/** What `open` gives for a source: an `*.index.json` opens a ShardedFile; a bare hf://org/repo,
 * or a string or URL the type system cannot see the end of, may be either. */
export type Opened<S> =
  S extends `${string}.index.json` ? ShardedFile
    : S extends `hf://${string}.safetensors` ? SafetensorsFile
    : S extends `hf://${string}` ? SafetensorsFile | ShardedFile
    : S extends string ? (string extends S ? SafetensorsFile | ShardedFile : SafetensorsFile)
      : S extends URL ? SafetensorsFile | ShardedFile
        : SafetensorsFile

/** An index's content (a dropped `*.index.json` File, say) with its shards: a sharded set. */
export declare function open(src: Blob | ArrayBuffer | ArrayBufferView | ByteSource,
  options: OpenOptions & { shards: ShardSources }): Promise<ShardedFile>
export declare function open<S extends Source>(src: S, options?: OpenOptions): Promise<Opened<S>>

/**
 * One safetensors file, never a sharded set: a source that names one (an `*.index.json`, or a
 * Hub repo that holds one) is refused with KindMismatch, before it is read when its name says.
 */
export declare function openFile(src: Source, options?: Omit<OpenOptions, 'shards'>): Promise<SafetensorsFile>
/**
 * A sharded set, never one file: from its `*.index.json` (a URL, or a path in Node), a Hub repo
 * that holds one, or an index's content with `shards`. One file is refused with KindMismatch.
 */
export declare function openSharded(src: string | URL, options?: OpenOptions): Promise<ShardedFile>
export declare function openSharded(src: Blob | ArrayBuffer | ArrayBufferView | ByteSource,
  options: OpenOptions & { shards: ShardSources }): Promise<ShardedFile>

/** A file on an HTTP(S) server, after its first ranged request (byteLength known). */
export interface UrlSource extends ByteSource {
  readonly url: string
  /** Where ranges are read: the URL the first request ended at, after redirects. */
  readonly finalUrl: string
  /** The first answer's status and Content-Type. */
  readonly response: { status: number; contentType: string | null }
  /** Bytes of the first answer kept in memory (served without another request). */
  readonly cachedBytes: number
  /** Drops the first answer's bytes (later reads of them are requests). */
  releaseCache(): void
  stream(offset: number, length: number, options?: { signal?: AbortSignal }): AsyncIterable<Uint8Array>
  /** Drops the kept bytes; nothing else is held open between reads. */
  close(): void
}
export declare function urlSource(url: string | URL, options?: HttpOptions): Promise<UrlSource>

export interface TensorLike {
  dtype: Dtype
  shape: ArrayLike<number | bigint>
  data: ArrayBufferView | ArrayBuffer
}

export type TensorsInput =
  | Record<string, TensorLike>
  | Map<string, TensorLike | Tensor>
  | Iterable<[string, TensorLike | Tensor]>
  | Iterable<Tensor>

export interface WriteOptions {
  /** String-to-string metadata; null or absent writes no __metadata__ key. */
  metadata?: Record<string, string> | Map<string, string> | null
}

/** The whole file in one exact-size Uint8Array; each tensor's bytes are copied once. */
export declare function serialize(tensors: TensorsInput, options?: WriteOptions): Promise<Uint8Array>
/** The header, then each tensor's own bytes with no copy. Rejects before streaming on bad input. */
export declare function serializeStream(tensors: TensorsInput, options?: WriteOptions): Promise<ReadableStream<Uint8Array>>

export declare function bytesSource(bytes: ArrayBuffer | ArrayBufferView): ByteSource
export declare function blobSource(blob: Blob): ByteSource

/**
 * Casts a tensor to F32, BF16 or F16 in the wasm core, each value rounded once to nearest, ties
 * to even (overflow to infinity, NaN stays NaN with its sign). To F32: any dtype but C64 and
 * F6. To BF16 / F16: F32, F64, and the dtypes exact in float32 (F16, BF16, F8_*, F4, BOOL, 8-
 * and 16-bit ints); 32- and 64-bit ints go to F32 only. The result lives in JS memory,
 * independent of the input, and is ready for serialize: data is a Float32Array for F32, a
 * Uint16Array for BF16, and for F16 what Tensor.data uses (Float16Array where the platform has
 * it, else Uint16Array). Casting to the tensor's own dtype copies it. `into`: the caller's
 * array (of the result's length) to write into and return, so repeated casts reuse warm memory.
 */
export declare function castTensor<D extends 'F32' | 'BF16' | 'F16'>(tensor: TensorLike | Tensor, dtype: D,
  options?: { into?: CastData<D> }): Promise<{ dtype: D; shape: Shape; data: CastData<D> }>
/** What castTensor's result holds for each target dtype. */
export type CastData<D extends 'F32' | 'BF16' | 'F16'> =
  D extends 'F32' ? Float32Array : D extends 'F16' ? Uint16Array | MaybeFloat16Array : Uint16Array

// ---- Awkward arrays (ak.to_safetensors files) ----

/** A node of the parsed form, in preorder (nodes[0] is the root). */
export interface AwkwardNode {
  class: 'NumpyArray' | 'EmptyArray' | 'RegularArray' | 'ListOffsetArray' | 'ListArray' | 'RecordArray'
    | 'IndexedArray' | 'IndexedOptionArray' | 'ByteMaskedArray' | 'BitMaskedArray' | 'UnmaskedArray' | 'UnionArray'
  form_key: string | null
  parameters: Record<string, unknown>
  /** NumpyArray: awkward's primitive ("int64"...), its safetensors dtype, inner shape. */
  primitive?: string
  dtype?: Dtype
  inner_shape?: number[]
  /** RegularArray */
  size?: number
  /** RecordArray: field names, null for a tuple. */
  fields?: string[] | null
  valid_when?: boolean
  lsb_order?: boolean
  /** Index dtypes as the form names them: offsets, starts, stops, index, mask, tags ("i64"...). */
  offsets?: string
  starts?: string
  stops?: string
  index?: string
  mask?: string
  tags?: string
  /** attribute ("data", "offsets", ...) -> tensor name ("node1-data", ...) */
  buffers: Record<string, string>
  /** Indices of the content nodes. */
  contents: number[]
  /** Entries the node's buffers can hold; null when unbounded. */
  capacity: number | null
}

/**
 * An awkward array read lazily: `at` and `toList` fetch only the buffer elements they need.
 * Values are plain: lists -> arrays, records -> objects, tuples -> arrays, strings -> strings,
 * bytestrings -> Uint8Array, missing -> null, int64/uint64 -> number when within 2^53 - 1
 * else bigint, complex -> { re, im }.
 */
export declare class AwkwardArray {
  /** Made by SafetensorsFile.awkward(), never with `new`: the constructor takes internal state. */
  private constructor()
  readonly length: number
  /** The form as awkward's Form.to_dict(verbose=True) gives it (whole stored array). */
  readonly form: Record<string, unknown>
  readonly nodes: AwkwardNode[]
  /** awkward's type string, e.g. "3 * var * {x: int64, y: ?string}" */
  readonly type: string
  /** Field names of the first record level ("0", "1", ... for a tuple). */
  readonly fields: string[]
  /** Entry i (negative counts from the end). */
  at(i: number, options?: ReadOptions): Promise<unknown>
  /** A lazy view of entries [start, stop), Array.prototype.slice rules (NaN or a string: InvalidArgument). */
  slice(start?: number, stop?: number): AwkwardArray
  /** Projects a field through lists, options and unions, as awkward's array[name]. */
  field(name: string): AwkwardArray
  toList(options?: ReadOptions): Promise<unknown[]>
  /** Frees the form state in the wasm heap (shared by every view of the array). */
  dispose(): void
  [Symbol.dispose](): void
}

export interface AwkwardTensors {
  [name: string]: { dtype: Dtype; shape: number[]; data: ArrayBufferView }
}

/**
 * The buffers and metadata awkward (ak.from_iter + ak.to_safetensors) makes from plain values:
 * pass them to serialize/serializeStream/writeFile as `(tensors, { metadata })`.
 */
export declare function fromValues(values: Iterable<unknown>): {
  tensors: AwkwardTensors
  metadata: { form: string; length: string }
}
/** A whole safetensors file holding the awkward array of `values`. */
export declare function serializeAwkward(values: Iterable<unknown>): Promise<Uint8Array>
