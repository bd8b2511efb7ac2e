/**
 * The marshalling boundary, the JS mirror of src/bindings.cpp: the one module that calls the
 * wasm core's bound functions, allocates and frees heap memory, and knows how the core lays
 * out what crosses on the heap (LAYOUT, checked against the C++ side by
 * tests/js/core-layout.test.js). Everything else in js/ gets plain results from here (a header's
 * table, a slice's byte ranges, a write plan, stats) and holds the loaded module (js/wasm.js
 * loads it) as an opaque value to hand back. The awkward reader's calls are in ./awkward.js,
 * loaded only with the awkward reader.
 *
 * Handles: each core object (st::ParsedFile, SlicePlanner, WritePlanner) lives within one call
 * here. Heap memory: what heapAlloc hands out belongs to the caller (a Tensor's bytes, read
 * buffers) until heapFree.
 */
import { DTYPES, dtypeIndex } from '../dtypes.js'
import { SafetensorsError, fromCoreError } from '../errors.js'

/** @typedef {any} Core the Emscripten module with the Embind functions (js/wasm.js loadCore) */

/**
 * How the core lays out what JS reads and writes on the heap, in bytes unless said otherwise:
 * struct sizes and field offsets, positions in records of words, element sizes of the arrays
 * that cross. The C++ side reports the same numbers (layout(), st::layoutJson in src/api.cpp).
 * Element sizes (pointer, offsetSize, dtypeSize, ...) are the typed arrays the code below uses:
 * they are here for the check, and a change to one needs new code, not only a new number.
 */
export const LAYOUT = {
  pointer: 4,  // an address, and a word of ParsedFile::tables: uint32 (wasm32)
  // st::TensorInfo: begin and end are uint64 data offsets, name a StringRef, dtype the Dtype.
  TensorInfo: { size: 40, begin: 0, end: 8, offsetSize: 8, name: 16, dimsOffset: 24, rank: 28, dtype: 32, dtypeSize: 1 },
  StringRef: { size: 8, offset: 0, length: 4 },  // uint32 each, into the strings
  MetadataEntry: { size: 16, key: 0, value: 8 },  // two StringRefs
  // ParsedFile::tables(): the position of each word (`words` in all); dims are `dim`-byte uint64s.
  tables: { words: 9, tensors: 0, count: 1, strings: 2, stringsLength: 3, dims: 4, hasMetadata: 5, metadata: 6,
    metadataCount: 7, byName: 8, dim: 8 },
  // StatsStream's results: `fields` doubles by position, then one per histogram bin.
  stats: { fields: 11, value: 8, count: 0, finiteCount: 1, nanCount: 2, infCount: 3, zeroCount: 4, min: 5, max: 6,
    mean: 7, std: 8, histogramMin: 9, histogramMax: 10 },
  // SlicePlanner: uint64 dims in and shape out; each range `rangeWords` doubles, by position.
  slice: { dim: 8, shape: 8, rangeWords: 2, rangeOffset: 0, rangeLength: 1, rangeValue: 8 },
  // WritePlanner::plan's arrays (writer.hpp FlatWriteInput), and order(), by element size.
  write: { nameLength: 4, dtype: 1, rank: 4, dim: 8, byteLength: 8, metadataLength: 4, order: 4 },
}

const TWO_32 = 2 ** 32
const utf8 = /* @__PURE__ */ new TextDecoder('utf-8', { fatal: false })

/**
 * A uint64 from its two uint32 words. Values above 2^53 cannot be Numbers without losing
 * precision: they come back as BigInt (only a dimension of a zero-size tensor can be that big).
 * @param {number} lo
 * @param {number} hi
 * @returns {number | bigint}
 */
function u64(lo, hi) {
  if (hi < 0x200000) return hi * TWO_32 + lo
  return (BigInt(hi) << 32n) | BigInt(lo)
}

// ---- Heap memory ----

// malloc can only serve what wasm32 addresses; the core itself caps memory at 4 GiB.
const MAX_ALLOCATION = 0xffff0000

/**
 * Allocates `byteLength` bytes on the wasm heap. The caller owns the address until heapFree. A
 * request the heap cannot hold is OutOfMemory, and the heap stays usable (src/heap_guard.cpp).
 * @param {Core} core
 * @param {number} byteLength
 * @returns {number} the address, as an unsigned number
 */
export function heapAlloc(core, byteLength) {
  const ptr = byteLength > MAX_ALLOCATION ? 0 : core._malloc(Math.max(byteLength, 1)) >>> 0
  if (ptr === 0) {
    throw new SafetensorsError('OutOfMemory', `cannot allocate ${byteLength} bytes in the wasm heap, which holds ` +
      `${heapInUse(core)} bytes now and cannot grow past 4 GiB: read less at once (a slice), or dispose ` +
      'tensors no longer needed')
  }
  return ptr
}

/** @param {Core} core @param {number} ptr an address from heapAlloc */
export function heapFree(core, ptr) {
  core._free(ptr)
}

/**
 * The core's C++ containers (a header's parse, slice and write plans, the stats' code table and
 * histogram) cannot report a failed allocation: built without exceptions, a failed operator new
 * aborts the whole module (docs/design.md, "The allocator guard at 4 GiB"). Before a
 * call that allocates inside the core, the heap shows it can hold `bytes`: a block of that size
 * allocated (OutOfMemory when it cannot be) and freed at once leaves a free region from which
 * the call's allocations, made synchronously right after, are served.
 * @param {Core} core @param {number} bytes at least what the call allocates, with room for headers
 */
export function reserveFor(core, bytes) {
  heapFree(core, heapAlloc(core, bytes))
}

/** Headers, alignment and small objects around the allocations a reservation is counted for. */
export const RESERVE_SLACK = 64 * 1024

/**
 * A view of heap bytes. Take it right before use: any allocation may grow the heap, which
 * detaches every earlier view (it then reads as length 0, never as wrong bytes).
 * @param {Core} core
 * @param {number} ptr
 * @param {number} byteLength
 */
export function heapView(core, ptr, byteLength) {
  return new Uint8Array(core.HEAPU8.buffer, ptr, byteLength)
}

/**
 * A typed view of `length` elements at `ptr` (aligned for the type), with heapView's lifetime.
 * @template {{ new (buffer: ArrayBuffer, byteOffset: number, length: number): any }} T
 * @param {Core} core
 * @param {T} type a typed-array class
 * @param {number} ptr
 * @param {number} length
 * @returns {InstanceType<T>}
 */
export function heapArray(core, type, ptr, length) {
  return new type(core.HEAPU8.buffer, ptr, length)
}

/** @param {Core} core @param {ArrayBufferView} view @returns {boolean} whether the view is of heap memory */
export function isHeapView(core, view) {
  return view.buffer === core.HEAPU8.buffer
}

/** @param {Core} core @returns {number} the bytes the allocator has handed out and not taken back */
export function heapInUse(core) {
  return core.heapInUse()
}

// ---- Headers ----

/**
 * The parsed header, copied out of the heap; tensors in file order, one entry per tensor in
 * each column.
 * @typedef {{
 *   count: number,
 *   strings: Uint8Array,
 *   nameOffset: Uint32Array,
 *   nameLength: Uint32Array,
 *   dtype: string[],
 *   begin: Float64Array,
 *   end: Float64Array,
 *   dimsOffset: Uint32Array,
 *   rank: Uint32Array,
 *   dims: (number | bigint)[],
 *   metadata: Record<string, string> | null,
 *   byName: Uint32Array,
 * }} HeaderTable
 *   strings: the UTF-8 of names, metadata keys and values, a name at its nameOffset and
 *   nameLength; begin and end: data offsets, relative to the data buffer; a shape is
 *   dims[dimsOffset, dimsOffset + rank); metadata: null without __metadata__; byName: the
 *   tensors' positions sorted by name bytes.
 */

/**
 * Rules 1-3 over the file's first bytes (st::ParsedFile::readHeaderLength): N, the header's
 * length, or the core's verdict, returned for the caller to explain (the bytes may say what the
 * file is instead).
 * @param {Core} core
 * @param {Uint8Array} prefix the file's first min(8, length) bytes
 * @param {number} fileLength
 * @returns {number | SafetensorsError}
 */
export function readHeaderLength(core, prefix, fileLength) {
  reserveFor(core, RESERVE_SLACK)  // the ParsedFile object
  const ptr = heapAlloc(core, 8)
  const parsed = core.parsedFileNew()
  try {
    heapView(core, ptr, prefix.length).set(prefix)
    const length = core.parsedFileReadHeaderLength(parsed, ptr, prefix.length, fileLength)
    return length < 0 ? fromCoreError(core.parsedFileError(parsed)) : length
  } finally {
    core.parsedFileDelete(parsed)
    heapFree(core, ptr)
  }
}

/**
 * Rules 4-10 over the N header bytes at heap address `ptr` (st::ParsedFile::parse): the table,
 * copied out once (no C++ object outlives the call). Throws the core's verdict.
 * @param {Core} core
 * @param {number} ptr
 * @param {number} headerLength N
 * @param {number} fileLength
 * @returns {HeaderTable}
 */
export function parseHeader(core, ptr, headerLength, fileLength) {
  // The parse's tree, names and tables peak at about 4.5 times the header's length (measured
  // over long names, short names, many dimensions and metadata): 8 times is reserved.
  reserveFor(core, 8 * headerLength + 1024 * 1024)
  const parsed = core.parsedFileNew()
  try {
    if (!core.parsedFileParse(parsed, ptr, headerLength, fileLength)) throw fromCoreError(core.parsedFileError(parsed))
    return readTables(core, core.parsedFileTables(parsed) >>> 0)
  } finally {
    core.parsedFileDelete(parsed)
  }
}

/**
 * The header's table from the words at `at` (see st::ParsedFile::tables).
 * @param {Core} core
 * @param {number} at
 * @returns {HeaderTable}
 */
function readTables(core, at) {
  const { TensorInfo: T, StringRef: S, MetadataEntry: M, tables: W } = LAYOUT
  const heap = core.HEAPU8.buffer
  const words = new Uint32Array(heap, at, W.words)
  const count = words[W.count]
  const stringsAt = words[W.strings]
  const strings = new Uint8Array(heap.slice(stringsAt, stringsAt + words[W.stringsLength]))
  const nameOffset = new Uint32Array(count)
  const nameLength = new Uint32Array(count)
  const dtype = new Array(count)
  const begin = new Float64Array(count)
  const end = new Float64Array(count)
  const dimsOffset = new Uint32Array(count)
  const rank = new Uint32Array(count)
  // The records in place, as uint32 words, and bytes for the one-byte dtype.
  const stride = T.size / 4
  const record = new Uint32Array(heap, words[W.tensors], count * stride)
  const recordBytes = new Uint8Array(heap, words[W.tensors], count * T.size)
  const [b, e, no, nl, d, r] = [T.begin / 4, T.end / 4, (T.name + S.offset) / 4, (T.name + S.length) / 4,
    T.dimsOffset / 4, T.rank / 4]
  let dimCount = 0
  for (let i = 0, w = 0; i < count; i++, w += stride) {
    // Offsets of a valid file are below its length, a safe integer.
    begin[i] = record[w + b + 1] * TWO_32 + record[w + b]
    end[i] = record[w + e + 1] * TWO_32 + record[w + e]
    nameOffset[i] = record[w + no]
    nameLength[i] = record[w + nl]
    dimsOffset[i] = record[w + d]
    rank[i] = record[w + r]
    dtype[i] = DTYPES[recordBytes[i * T.size + T.dtype]]
    dimCount = Math.max(dimCount, dimsOffset[i] + rank[i])
  }
  const dimWords = new Uint32Array(heap, words[W.dims], (dimCount * W.dim) / 4)
  const dims = new Array(dimCount)
  for (let k = 0; k < dimCount; k++) dims[k] = u64(dimWords[2 * k], dimWords[2 * k + 1])
  /** @type {Record<string, string> | null} */
  let metadata = null
  if (words[W.hasMetadata]) {
    const m = new Uint32Array(heap, words[W.metadata], (words[W.metadataCount] * M.size) / 4)
    const text = (/** @type {number} */ ref) => utf8.decode(strings.subarray(m[ref + S.offset / 4], m[ref + S.offset / 4] + m[ref + S.length / 4]))
    metadata = {}
    // defineProperty, not assignment: a key named "__proto__" must stay an ordinary entry.
    for (let w = 0; w < m.length; w += M.size / 4) {
      Object.defineProperty(metadata, text(w + M.key / 4),
        { value: text(w + M.value / 4), enumerable: true, writable: true, configurable: true })
    }
  }
  const byNameAt = words[W.byName]
  const byName = new Uint32Array(heap.slice(byNameAt, byNameAt + count * 4))
  return { count, strings, nameOffset, nameLength, dtype, begin, end, dimsOffset, rank, dims, metadata, byName }
}

// ---- Slices ----

/**
 * Plans a slice of one tensor of a parsed file (st::SlicePlanner): the slice's shape, the
 * absolute byte ranges [offset, length] that make it up, in output order, and their total.
 * Throws the core's verdict (InvalidSlice, SliceOutOfRange...).
 * @param {Core} core
 * @param {string} name
 * @param {string} dtype
 * @param {(number | bigint)[]} shape
 * @param {number} absoluteBegin the file offset of the tensor's first byte
 * @param {string} spec the slice in the core's text form ("0, 2:5")
 * @returns {{ shape: (number | bigint)[], ranges: [number, number][], byteLength: number }}
 */
export function planSlice(core, name, dtype, shape, absoluteBegin, spec) {
  const S = LAYOUT.slice
  // The ranges, as many as the slice makes (16 bytes each in the planner and 16 in what JS
  // reads), are checked against the heap in C++ (st::heapHolds): too many is the core's
  // OutOfMemory. Reserved here: the planner, its name, spec, shape and messages.
  reserveFor(core, RESERVE_SLACK + 8 * (name.length + spec.length))
  const dims = heapAlloc(core, Math.max(shape.length, 1) * S.dim)
  const planner = core.slicePlannerNew()
  try {
    const dimValues = heapArray(core, BigUint64Array, dims, shape.length)
    shape.forEach((d, i) => { dimValues[i] = BigInt(d) })
    if (!core.slicePlannerPlan(planner, name, dtypeIndex(dtype), dims, shape.length, absoluteBegin, spec))
      throw fromCoreError(core.slicePlannerError(planner))
    const r = heapArray(core, Float64Array, core.slicePlannerRanges(planner) >>> 0,
      core.slicePlannerRangeCount(planner) * S.rangeWords)
    /** @type {[number, number][]} */
    const ranges = []
    for (let i = 0; i < r.length; i += S.rangeWords) ranges.push([r[i + S.rangeOffset], r[i + S.rangeLength]])
    const w = heapArray(core, Uint32Array, core.slicePlannerShape(planner) >>> 0,
      (core.slicePlannerRank(planner) * S.shape) / 4)
    const outShape = []
    for (let i = 0; i < w.length; i += 2) outShape.push(u64(w[i], w[i + 1]))
    return { shape: outShape, ranges, byteLength: core.slicePlannerByteLength(planner) }
  } finally {
    core.slicePlannerDelete(planner)
    heapFree(core, dims)
  }
}

// ---- Writing ----

/**
 * Plans a file (st::WritePlanner over writer.hpp's FlatWriteInput, see planWrite there for the
 * checks): the header bytes (a JS copy), the input indices in the order their bytes follow the
 * header, and the file length. Throws the core's verdict.
 * @param {Core} core
 * @param {{ name: Uint8Array, dtype: string, shape: bigint[], byteLength: number }[]} tensors
 *   names as UTF-8; dtypes known (dtypeIndex >= 0)
 * @param {Uint8Array[] | null} metadata the UTF-8 of key 0, value 0, key 1, value 1...; null
 *   writes no __metadata__
 * @returns {{ header: Uint8Array, order: number[], fileLength: number }}
 */
export function planWrite(core, tensors, metadata) {
  const W = LAYOUT.write
  const n = tensors.length
  const meta = metadata ?? []
  const sum = (/** @type {number[]} */ values) => values.reduce((s, v) => s + v, 0)
  const dimCount = sum(tensors.map((t) => t.shape.length))
  // One block, the 8-byte arrays first so that every array is aligned to its element size.
  const byteLengthsAt = dimCount * W.dim
  const nameLengthsAt = byteLengthsAt + n * W.byteLength
  const ranksAt = nameLengthsAt + n * W.nameLength
  const metaLengthsAt = ranksAt + n * W.rank
  const dtypesAt = metaLengthsAt + meta.length * W.metadataLength
  const namesAt = dtypesAt + n * W.dtype
  const metaAt = namesAt + sum(tensors.map((t) => t.name.length))
  const metaBytes = sum(meta.map((b) => b.length))
  // The header the planner builds: names and metadata as escaped JSON strings, each tensor's
  // dtype, offsets and keys in under 100 bytes, each dimension in at most 21 digits; the
  // planner's strings and tables peak at a few times that, and 8 times is reserved.
  const text = sum(tensors.map((t) => jsonLength(t.name))) + sum(meta.map(jsonLength))
  reserveFor(core, 8 * (text + 100 * n + 21 * dimCount) + RESERVE_SLACK)
  const block = heapAlloc(core, metaAt + metaBytes)
  const planner = core.writePlannerNew()
  try {
    const dims = heapArray(core, BigUint64Array, block, dimCount)
    let k = 0
    for (const t of tensors) for (const d of t.shape) dims[k++] = d
    heapArray(core, BigUint64Array, block + byteLengthsAt, n).set(tensors.map((t) => BigInt(t.byteLength)))
    heapArray(core, Uint32Array, block + nameLengthsAt, n).set(tensors.map((t) => t.name.length))
    heapArray(core, Uint32Array, block + ranksAt, n).set(tensors.map((t) => t.shape.length))
    heapArray(core, Uint32Array, block + metaLengthsAt, meta.length).set(meta.map((b) => b.length))
    heapView(core, block + dtypesAt, n).set(tensors.map((t) => dtypeIndex(t.dtype)))
    let at = block + namesAt
    for (const t of tensors) { heapView(core, at, t.name.length).set(t.name); at += t.name.length }
    at = block + metaAt
    for (const b of meta) { heapView(core, at, b.length).set(b); at += b.length }
    const ok = core.writePlannerPlan(planner, n, block + namesAt, block + nameLengthsAt, block + dtypesAt, block + ranksAt,
      block, block + byteLengthsAt, metadata !== null, meta.length / 2, block + metaAt, block + metaLengthsAt)
    if (!ok) throw fromCoreError(core.writePlannerError(planner))
    const header = heapView(core, core.writePlannerHeader(planner) >>> 0, core.writePlannerHeaderLength(planner)).slice()
    const order = Array.from(heapArray(core, Uint32Array, core.writePlannerOrder(planner) >>> 0, n))
    return { header, order, fileLength: core.writePlannerFileLength(planner) }
  } finally {
    core.writePlannerDelete(planner)
    heapFree(core, block)
  }
}

/** @param {Uint8Array} bytes UTF-8 @returns {number} its length as a JSON string's content, escaped */
function jsonLength(bytes) {
  let n = bytes.length
  for (const b of bytes) if (b < 0x20) n += 5; else if (b === 0x22 || b === 0x5c) n += 1
  return n
}

// ---- Values ----

/**
 * @typedef {{ count: number, finiteCount: number, nanCount: number, infCount: number, zeroCount: number,
 *   min: number, max: number, mean: number, std: number,
 *   histogram: { min: number, max: number, counts: number[] } }} Stats
 */

/**
 * Statistics of `elements` elements of dtype at heap address `ptr` (a StatsStream fed the whole
 * tensor at once), computed without a copy of the data; null for dtypes without values (F6).
 * @param {Core} core
 * @param {string} dtype
 * @param {number} ptr
 * @param {number} elements
 * @param {number} bins
 * @returns {Stats | null}
 */
export function stats(core, dtype, ptr, elements, bins) {
  let stream
  try {
    stream = new StatsStream(core, dtype, bins, elements)
  } catch (error) {
    if (error instanceof SafetensorsError && error.code === 'UnsupportedDtype') return null
    throw error
  }
  try {
    stream.add(ptr, elements)
    const { stats: result, complete } = stream.finish()
    if (complete) return result
    stream.addHistogram(ptr, elements)
    return stream.finishHistogram()
  } finally {
    stream.dispose()
  }
}

/** @param {Core} core @param {number} out StatsStream's doubles @param {number} bins @returns {Stats} */
function readStats(core, out, bins) {
  const S = LAYOUT.stats
  const v = heapArray(core, Float64Array, out, S.fields + bins)
  return {
    count: v[S.count], finiteCount: v[S.finiteCount], nanCount: v[S.nanCount], infCount: v[S.infCount],
    zeroCount: v[S.zeroCount], min: v[S.min], max: v[S.max], mean: v[S.mean], std: v[S.std],
    histogram: { min: v[S.histogramMin], max: v[S.histogramMax], counts: Array.from(v.subarray(S.fields)) },
  }
}

/** What StatsStream's start allocates in the core, at most. */
const STATS_START_BYTES = (1 << 16) * 8 + 8192 + RESERVE_SLACK

/**
 * Statistics of a tensor handed over in pieces (st::StatsStream): add() each piece in order,
 * then finish(); when finish() says `complete: false` (dtypes over 16 bits), addHistogram() each
 * piece again and finishHistogram(). The result is stats()'s for the whole tensor, bit for
 * bit. Owns a core object: dispose() frees it.
 */
export class StatsStream {
  #core
  #handle
  #bins
  /**
   * @param {Core} core @param {string} dtype @param {number} bins
   * @param {number} [elements] the tensor's count, when known: a small tensor of 16 bits or
   *   fewer then takes two passes rather than a table of every code (f.stats gives none: one pass)
   */
  constructor(core, dtype, bins, elements = Infinity) {
    this.#core = core
    this.#bins = bins
    // The object, its 8 KiB carry and a code table of 2^16 counts at most (src/stats.hpp).
    reserveFor(core, STATS_START_BYTES)
    this.#handle = core.statsStreamNew()
    if (!core.statsStreamStart(this.#handle, dtypeIndex(dtype), bins, elements)) {
      this.dispose()
      throw new SafetensorsError('UnsupportedDtype', `${dtype} values cannot be summarised`)
    }
  }

  /** @param {number} ptr heap address @param {number} elements whole elements (F4: even but for the last piece) */
  add(ptr, elements) { this.#core.statsStreamAdd(this.#handle, ptr, elements) }

  /** @param {number} ptr @param {number} elements */
  addHistogram(ptr, elements) { this.#core.statsStreamAddHistogram(this.#handle, ptr, elements) }

  /** @returns {{ stats: Stats, complete: boolean }} */
  finish() {
    return this.#result((out) => this.#core.statsStreamFinish(this.#handle, out))
  }

  /** @returns {Stats} */
  finishHistogram() {
    return this.#result((out) => { this.#core.statsStreamFinishHistogram(this.#handle, out); return true }).stats
  }

  /** @param {(out: number) => boolean} call */
  #result(call) {
    const S = LAYOUT.stats
    const out = heapAlloc(this.#core, (S.fields + this.#bins) * S.value)
    try {
      // The histogram, grown by a slot (up to twice its capacity) and copied once.
      reserveFor(this.#core, 4 * (this.#bins + 1) * 8 + RESERVE_SLACK)
      const complete = call(out)
      return { stats: readStats(this.#core, out, this.#bins), complete }
    } finally {
      heapFree(this.#core, out)
    }
  }

  dispose() {
    if (this.#handle === 0) return
    this.#core.statsStreamDelete(this.#handle)
    this.#handle = 0
  }
}

/**
 * The values of `elements` elements of dtype at heap address `ptr` as float32 (C64: real,
 * imaginary), converted in C++ and copied into JS memory; null for dtypes without a float32
 * form (F6).
 * @param {Core} core
 * @param {string} dtype
 * @param {number} ptr
 * @param {number} elements
 * @returns {Float32Array | null}
 */
export function toFloat32(core, dtype, ptr, elements) {
  const count = dtype === 'C64' ? elements * 2 : elements
  const dst = heapAlloc(core, count * 4)
  try {
    if (!core.toFloat32(dtypeIndex(dtype), ptr, elements, dst)) return null
    return heapArray(core, Float32Array, dst, count).slice()
  } finally {
    heapFree(core, dst)
  }
}

/**
 * One chunk of a cast, heap to heap: decodes `n` elements of dtype at `src` into float32 at `dst`
 * (src/convert.hpp). False for dtypes without a float32 form.
 * @param {Core} core
 * @param {string} dtype
 * @param {number} src
 * @param {number} n
 * @param {number} dst
 * @returns {boolean}
 */
export function toFloat32Into(core, dtype, src, n, dst) {
  return core.toFloat32(dtypeIndex(dtype), src, n, dst)
}

/**
 * One chunk of a cast, heap to heap: rounds `n` float32 at `src` to BF16 (toBf16) or F16 at
 * `dst`, to nearest even.
 * @param {Core} core
 * @param {boolean} toBf16
 * @param {number} src
 * @param {number} n
 * @param {number} dst
 */
export function float32ToHalfInto(core, toBf16, src, n, dst) {
  core.float32ToHalf(toBf16, src, n, dst)
}
