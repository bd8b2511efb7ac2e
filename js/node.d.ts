// Types for the Node entry: everything in index.d.ts, plus file paths and writeFile. `open` also
// takes a path (a `*.index.json` path opens a ShardedFile whose shards must sit in its folder).
export * from './index.js'
import type { ByteSource, TensorsInput, WriteOptions, Progress } from './index.js'

/** A Node file read with positioned fs reads straight into the wasm heap. */
export declare function nodeFileSource(path: string): Promise<ByteSource>

/**
 * Writes through a temporary file in the same folder, renamed over `path` when complete:
 * a failure (or an abort) never leaves a half-written file at `path`. File system failures are
 * SafetensorsError('IoError').
 */
export declare function writeFile(path: string, tensors: TensorsInput,
  options?: WriteOptions & { onProgress?: (progress: Progress) => void; signal?: AbortSignal }): Promise<void>

/** Writes the awkward array of `values` to `path` (fromValues, then writeFile). */
export declare function writeAwkward(path: string, values: Iterable<unknown>,
  options?: { onProgress?: (progress: Progress) => void; signal?: AbortSignal }): Promise<void>
