/**
 * Byte ranges of a source streamed through two heap buffers: while the caller holds one piece
 * (a typed view into the heap), the next is read into the other. Whatever the ranges' total,
 * the heap holds two pieces at most. What f.chunks() and the whole-file digest stand on.
 */
import { heapAlloc, heapArray, heapFree, heapView } from '../core/index.js'
import { SafetensorsError, throwIfAborted } from '../errors.js'
import { readTargets } from './reader.js'

export const DEFAULT_CHUNK_BYTES = 4 << 20

/**
 * @typedef {{ chunkBytes?: number, signal?: AbortSignal,
 *   onProgress?: (p: { loaded: number, total: number }) => void }} ChunkOptions
 * @typedef {{ offset: number, data: any }} Chunk
 */

/**
 * @param {any} core
 * @param {import('./sources.js').ByteSource} source
 * @param {[number, number][]} ranges absolute [offset, length] pairs, read in this order
 * @param {{ unit: number, ctor: any }} shape unit: bytes a piece's length is a multiple of
 *   (whole elements); ctor: the typed-array class of the views
 * @param {ChunkOptions} [options]
 * @returns {AsyncGenerator<Chunk, void, undefined>}
 */
export async function* streamRanges(core, source, ranges, { unit, ctor }, options = {}) {
  const { signal, onProgress } = options
  throwIfAborted(signal)
  const requested = options.chunkBytes ?? DEFAULT_CHUNK_BYTES
  if (!Number.isInteger(requested) || requested <= 0)
    throw new SafetensorsError('InvalidArgument', `chunkBytes must be a positive integer, got ${requested}`)
  const total = ranges.reduce((sum, [, length]) => sum + length, 0)
  const size = Math.min(Math.max(unit, requested - (requested % unit)), Math.max(total, 1))
  if (source.stream && ranges.length <= MAX_STREAMED_RANGES) {
    yield* streamed(core, source, ranges, size, { total, ctor }, options)
    return
  }
  const pieces = plan(ranges, size)
  // The read ahead is aborted when the caller leaves the loop (or fails) mid-way.
  const controller = new AbortController()
  const abort = () => controller.abort(signal?.reason)
  signal?.addEventListener('abort', abort, { once: true })
  const buffers = [heapAlloc(core, size), pieces.length > 1 ? heapAlloc(core, size) : 0]
  /** @param {number} k @returns {Promise<void>} */
  const read = (k) => readTargets(core, source, pieces[k].targets(buffers[k % 2]), { signal: controller.signal })
  /** @type {Promise<void> | null} */
  let pending = pieces.length > 0 ? read(0) : null
  let loaded = 0
  try {
    for (let k = 0; k < pieces.length; k++) {
      await pending
      throwIfAborted(signal)
      pending = k + 1 < pieces.length ? read(k + 1) : null
      // An unhandled rejection would surface if the caller stops before awaiting it.
      pending?.catch(() => {})
      const { offset, length } = pieces[k]
      loaded += length
      onProgress?.({ loaded, total })
      yield { offset, data: heapArray(core, ctor, buffers[k % 2], length / ctor.BYTES_PER_ELEMENT) }
    }
  } finally {
    signal?.removeEventListener('abort', abort)
    if (pending) {
      controller.abort()
      await pending.catch(() => {})
    }
    for (const ptr of buffers) if (ptr) heapFree(core, ptr)
  }
}

/** A source that streams (a URL) gets one request per range up to this many ranges. */
const MAX_STREAMED_RANGES = 64

/**
 * The ranges of a streaming source (a URL) as one request each, poured into the two buffers as
 * the bytes arrive: a filler task fills one buffer while the caller holds the other, and stops
 * pulling from the response (backpressure) while both are taken. One request per tensor keeps
 * the connection busy where a request per piece would wait a round trip each time.
 * @param {any} core @param {import('./sources.js').ByteSource} source @param {[number, number][]} ranges
 * @param {number} size bytes per piece @param {{ total: number, ctor: any }} what
 * @param {ChunkOptions} options
 * @returns {AsyncGenerator<Chunk, void, undefined>}
 */
async function* streamed(core, source, ranges, size, { total, ctor }, options) {
  const { signal, onProgress } = options
  const controller = new AbortController()
  const abort = () => controller.abort(signal?.reason)
  signal?.addEventListener('abort', abort, { once: true })
  const stream = /** @type {NonNullable<typeof source.stream>} */ (source.stream)
  /** @type {number[]} */
  const free = [heapAlloc(core, size)]
  if (total > size) free.push(heapAlloc(core, size))
  const buffers = free.slice()
  /** @type {({ ptr: number, offset: number, length: number } | null | { error: unknown })[]} */
  const filled = []
  /** @type {(() => void)[]} the filler's and the caller's waits */
  let waiting = []
  const notify = () => {
    const wake = waiting
    waiting = []
    for (const resolve of wake) resolve()
  }
  /** @param {() => boolean} ready @returns {Promise<void>} */
  const until = async (ready) => {
    while (!ready()) await new Promise((resolve) => { waiting.push(() => resolve(undefined)) })
  }
  const filler = (async () => {
    let ptr = 0
    let fill = 0
    let offset = 0
    const take = async () => {
      await until(() => free.length > 0 || controller.signal.aborted)
      throwIfAborted(controller.signal)
      return /** @type {number} */ (free.shift())
    }
    const hand = (/** @type {number} */ length) => {
      filled.push({ ptr, offset, length })
      offset += length
      notify()
    }
    try {
      ptr = await take()
      for (const [start, length] of ranges) {
        let got = 0
        for await (const chunk of stream(start, length, { signal: controller.signal })) {
          for (let at = 0; at < chunk.length;) {
            const n = Math.min(size - fill, chunk.length - at)
            heapView(core, ptr + fill, n).set(chunk.subarray(at, at + n))
            fill += n
            at += n
            if (fill === size) {
              hand(fill)
              fill = 0
              if (offset < total) ptr = await take()
            }
          }
          got += chunk.length
        }
        if (got !== length) {
          throw new SafetensorsError('ShortRead', `asked for ${length} bytes at offset ${start}, the source gave ${got}`,
            { offset: start + got })
        }
      }
      if (fill > 0) hand(fill)
      filled.push(null)
    } catch (error) {
      filled.push({ error })
    }
    notify()
  })()
  let loaded = 0
  try {
    for (;;) {
      await until(() => filled.length > 0)
      const item = /** @type {(typeof filled)[number]} */ (filled.shift())
      if (item === null) break
      if ('error' in item) throw item.error
      throwIfAborted(signal)
      loaded += item.length
      onProgress?.({ loaded, total })
      yield { offset: item.offset, data: heapArray(core, ctor, item.ptr, item.length / ctor.BYTES_PER_ELEMENT) }
      free.push(item.ptr)
      notify()
    }
  } finally {
    signal?.removeEventListener('abort', abort)
    controller.abort()
    notify()
    await filler
    for (const ptr of buffers) heapFree(core, ptr)
  }
}

/**
 * The pieces: up to `size` bytes of the ranges each, in order.
 * @param {[number, number][]} ranges @param {number} size
 * @returns {{ offset: number, length: number, targets: (ptr: number) => { offset: number, length: number, ptr: number }[] }[]}
 */
function plan(ranges, size) {
  /** @type {ReturnType<typeof plan>} */
  const pieces = []
  /** @type {[number, number][]} */
  let parts = []
  let filled = 0
  let offset = 0
  const close = () => {
    const spans = parts
    pieces.push({
      offset, length: filled,
      targets: (/** @type {number} */ ptr) => {
        let at = ptr
        return spans.map(([o, n]) => {
          const t = { offset: o, length: n, ptr: at }
          at += n
          return t
        })
      },
    })
    offset += filled
    parts = []
    filled = 0
  }
  for (const [start, length] of ranges) {
    for (let done = 0; done < length;) {
      const n = Math.min(length - done, size - filled)
      parts.push([start + done, n])
      filled += n
      done += n
      if (filled === size) close()
    }
  }
  if (filled > 0) close()
  return pieces
}
