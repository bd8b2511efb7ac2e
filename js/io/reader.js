/**
 * Moves file bytes into the wasm heap. The core says which absolute byte ranges are needed
 * and where each goes; this plans the reads (merging ranges closer than `mergeGap` into one
 * request), runs them with bounded concurrency, and copies each arriving chunk straight into
 * its place. One copy at most: a source that can read into a view (a Node file) gets the heap
 * view itself.
 */
import { heapView } from '../core/index.js'
import { SafetensorsError, throwIfAborted } from '../errors.js'
import { checkConcurrency, checkNumber } from '../options.js'
import { pool } from './pool.js'
import { checkPiece, readExactly } from './sources.js'

/**
 * @typedef {{ offset: number, length: number, ptr: number }} Target
 *   `length` bytes from absolute file `offset` go to heap address `ptr`.
 * @typedef {{ offset: number, length: number, targets: Target[] }} Span  one read request
 * @typedef {{ signal?: AbortSignal, onProgress?: (p: { loaded: number, total: number }) => void,
 *   mergeGap?: number, concurrency?: number }} ReadOptions
 */

/** Spans above this many bytes are read target by target (see readSpan). */
const DIRECT_READ_SPAN = 1 << 20

/**
 * Groups targets into read requests: sorted by offset, merged when the gap between them is at
 * most `mergeGap` bytes (reading a small gap costs less than another round trip).
 * @param {Target[]} targets
 * @param {number} mergeGap
 * @returns {Span[]}
 */
export function planSpans(targets, mergeGap) {
  const sorted = targets.filter((t) => t.length > 0).sort((a, b) => a.offset - b.offset)
  /** @type {Span[]} */
  const spans = []
  for (const t of sorted) {
    const last = spans[spans.length - 1]
    if (last && t.offset - (last.offset + last.length) <= mergeGap) {
      last.length = Math.max(last.length, t.offset + t.length - last.offset)
      last.targets.push(t)
    } else {
      spans.push({ offset: t.offset, length: t.length, targets: [t] })
    }
  }
  return spans
}

/**
 * Copies the part of `chunk` (file bytes starting at `chunkOffset`) that each target wants.
 * @param {any} core
 * @param {Target[]} targets
 * @param {number} chunkOffset
 * @param {Uint8Array} chunk
 */
function scatter(core, targets, chunkOffset, chunk) {
  const chunkEnd = chunkOffset + chunk.length
  for (const t of targets) {
    const begin = Math.max(t.offset, chunkOffset)
    const end = Math.min(t.offset + t.length, chunkEnd)
    if (begin >= end) continue
    heapView(core, t.ptr + (begin - t.offset), end - begin)
      .set(chunk.subarray(begin - chunkOffset, end - chunkOffset))
  }
}

/**
 * @param {any} core
 * @param {import('./sources.js').ByteSource} source
 * @param {Span} span
 * @param {ReadOptions} options
 * @param {(n: number) => void} progress
 */
async function readSpan(core, source, span, options, progress) {
  const { signal } = options
  const end = span.offset + span.length
  if (source.stream) {
    let position = span.offset
    for await (const chunk of source.stream(span.offset, span.length, { signal })) {
      throwIfAborted(signal)
      scatter(core, span.targets, position, checkPiece(chunk, position, end - position))
      position += chunk.length
      progress(chunk.length)
    }
    if (position !== end) throw shortRead(span, position - span.offset)
    return
  }
  // A source that reads into views (a Node file) reads straight into each target's heap bytes,
  // unless the span is small enough that one read into a buffer beats many little ones.
  if (source.readInto && (span.targets.length === 1 || span.length > DIRECT_READ_SPAN)) {
    for (const t of span.targets) {
      await readIntoTarget(core, source, t, signal)
      progress(t.length)
    }
    return
  }
  const bytes = await readExactly(source, span.offset, span.length, { signal })
  throwIfAborted(signal)
  scatter(core, span.targets, span.offset, bytes)
  progress(span.length)
}

/**
 * source.readInto for one target, held to its contract: views only inside the target (a view
 * elsewhere would write over other heap bytes), and every byte of it asked for: a read that
 * left bytes unwritten would hand out what the heap held before (another file's bytes).
 * @param {any} core @param {import('./sources.js').ByteSource} source @param {Target} t
 * @param {AbortSignal | undefined} signal
 */
async function readIntoTarget(core, source, t, signal) {
  /** @type {[number, number][]} the views handed out, [start, end) */
  const views = []
  /** @param {number} at @param {number} n */
  const viewAt = (at, n) => {
    if (!Number.isSafeInteger(at) || !Number.isSafeInteger(n) || at < 0 || n < 0 || at + n > t.length)
      throw new SafetensorsError('InvalidSource', `readInto asked for a view of bytes ${at} to ${at + n} of a ` +
        `${t.length}-byte read at offset ${t.offset}`, { offset: t.offset })
    views.push([at, at + n])
    return heapView(core, t.ptr + at, n)
  }
  await /** @type {NonNullable<typeof source.readInto>} */ (source.readInto)(t.offset, t.length, viewAt, { signal })
  throwIfAborted(signal)
  const covered = firstGap(views)
  if (covered < t.length)
    throw new SafetensorsError('ShortRead', `asked for ${t.length} bytes at offset ${t.offset}, the source's readInto ` +
      `wrote only the first ${covered} of them`, { offset: t.offset + covered })
}

/**
 * Where the first byte no view covers is, from 0 (views asked for twice or out of order count
 * once).
 * @param {[number, number][]} views
 */
function firstGap(views) {
  let end = 0
  for (const [start, stop] of views.sort((a, b) => a[0] - b[0])) {
    if (start > end) break
    end = Math.max(end, stop)
  }
  return end
}

/** @param {Span} span @param {number} got */
function shortRead(span, got) {
  return new SafetensorsError('ShortRead',
    `asked for ${span.length} bytes at offset ${span.offset}, the source gave ${got}`,
    { offset: span.offset + got })
}

/**
 * Reads every target into the heap. Rejects with the first failure; the caller frees.
 * @param {any} core
 * @param {import('./sources.js').ByteSource} source
 * @param {Target[]} targets
 * @param {ReadOptions} [options]
 */
export async function readTargets(core, source, targets, options = {}) {
  const { signal, onProgress } = options
  throwIfAborted(signal)
  const gap = checkNumber('mergeGap', options.mergeGap, source.defaultMergeGap ?? 0)
  const mergeGap = source.readInto && !source.stream ? 0 : gap
  const spans = planSpans(targets, mergeGap)
  const total = spans.reduce((sum, s) => sum + s.length, 0)
  let loaded = 0
  /** @param {number} n */
  const progress = (n) => {
    loaded += n
    onProgress?.({ loaded, total })
  }
  const concurrency = checkConcurrency(options.concurrency, source.defaultConcurrency ?? 4)
  // Each span checks its bytes; counting the spans read makes sure none was skipped, so the
  // caller never hands out heap bytes nothing wrote (which hold whatever was freed there).
  let read = 0
  await pool(spans, concurrency, signal, async (span, spanSignal) => {
    await readSpan(core, source, span, { ...options, signal: spanSignal }, progress)
    read++
  })
  if (read !== spans.length)
    throw new SafetensorsError('ShortRead', `${spans.length - read} of ${spans.length} byte ranges were not read`)
}
