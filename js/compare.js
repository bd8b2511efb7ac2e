/**
 * The comparison of two checkpoints by tensor name, for the CLI's `diff` (js/cli/diff.js) and the
 * inspector's compare mode: no Node built-ins, so it runs in a browser too. Not imported by the
 * package's entry (js/index.js): the reading page does not carry it.
 *
 * Tensors are matched by name (the lists in A's order, a sharded set's in its index's; onlyInB
 * in B's): those only in A, only in B, those whose shape or dtype changed (no values read), and
 * those of the same shape and dtype, whose bytes are read from both sides in step, piece by piece
 * (f.chunks: two pieces per side in the wasm heap, plus 256 KiB of float32 scratch per side for
 * the dtypes decoded in the core), so a tensor of any size compares in bounded memory. Each pair
 * of pieces is compared byte for byte first; only a pair that differs has its values compared (a
 * pair that is the same adds A's values to ||A|| alone, which a later pair that differs needs). A
 * tensor whose bytes are all the same is `identical`; one whose bytes differ is changed
 * (`kind: 'values'`) with:
 * - maxAbsDiff, meanAbsDiff: the largest and the mean |b - a| over the elements where both values
 *   are finite (the mean counts the equal ones too);
 * - relativeChange: ||B - A|| / ||A|| (Euclidean norms, over those same elements); 0 when nothing
 *   changed, null when A is all zeros there and B is not;
 * - values (elements), changedValues (elements whose values differ), nonFiniteChanges (of those,
 *   the ones where a side is NaN or ±Inf: left out of the three numbers).
 * NaN and NaN are equal (whatever their payloads), as are +0 and -0, and Inf and Inf of one sign: a
 * tensor whose bytes differ only so is changed (its bytes differ), with changedValues 0. Values
 * are compared as float64: F32 and F64 as stored, F16, BF16, F8 and F4 decoded to float32 in the
 * core, integers as numbers (I64 and U64 differences taken exactly, then as float64), C64 by the
 * modulus of the complex difference. F6 has no value form: its bytes alone are compared, and a
 * changed F6 tensor has null numbers. Quantized weights are compared as stored (their parts).
 *
 * A shape change (whatever the dtypes) is `kind: 'shape'`, a dtype change with the same shape is
 * `kind: 'dtype'`; both have maxAbsDiff, meanAbsDiff, relativeChange, changedValues and
 * nonFiniteChanges null, and every changed entry has `a` and `b`: { dtype, shape } of each side.
 */
import { heapAlloc, heapArray, heapFree, toFloat32Into } from './core/index.js'
import { DTYPE_BITS, elementCount } from './dtypes.js'
import { SafetensorsError, throwIfAborted } from './errors.js'
import { ShardedFile } from './sharded.js'
import { loadCore } from './wasm.js'

/** Bytes read at a time from each side, unless told. */
export const DEFAULT_CHUNK_BYTES = 4 << 20
/** Elements decoded to float32 at a time (F16, BF16, F8, F4): 256 KiB of scratch per side. */
const DECODE_ELEMENTS = 1 << 16

/**
 * @typedef {import('./index.js').SafetensorsFile | import('./index.js').ShardedFile} AnyFile
 * @typedef {{ dtype: string, shape: any[] }} Side  shape: dimensions above 2^53 as strings
 * @typedef {{ name: string, kind: 'dtype' | 'shape' | 'values', maxAbsDiff: number | null,
 *   meanAbsDiff: number | null, relativeChange: number | null, a: Side, b: Side, values: number,
 *   changedValues: number | null, nonFiniteChanges: number | null }} Change
 * @typedef {{ onlyInA: string[], onlyInB: string[], changed: Change[], identical: number }} CompareResult
 * @typedef {{ chunkBytes?: number, only?: (name: string) => boolean, signal?: AbortSignal,
 *   onProgress?: (p: { loaded: number, total: number }) => void }} CompareOptions
 *   onProgress: bytes read from both sides, of all they hold of the tensors compared by value
 */

/** Shapes as JSON: dimensions above 2^53 (BigInt) as strings. @param {any[]} shape */
const shapeJson = (shape) => shape.map((d) => (typeof d === 'bigint' ? d.toString() : d))

/** @param {CompareResult} r whether A and B differ at all */
export function differs(r) {
  return r.onlyInA.length > 0 || r.onlyInB.length > 0 || r.changed.length > 0
}

/**
 * Every tensor's dtype, shape and bytes, in the file's order (a sharded set: the index's).
 * @param {AnyFile} f
 * @returns {Promise<Map<string, { dtype: string, shape: any[], byteLength: number }>>}
 */
async function tableOf(f) {
  const out = new Map()
  if (f instanceof ShardedFile) {
    await f.loadHeaders()
    for (const name of f.names) out.set(name, await f.info(name))
  } else {
    for (const name of f.names) out.set(name, f.info(name))
  }
  return out
}

/**
 * Compares two opened checkpoints (see the file's comment for what is compared and how).
 * @param {AnyFile} a
 * @param {AnyFile} b
 * @param {CompareOptions} [options]
 * @returns {Promise<CompareResult>}
 */
export async function compareFiles(a, b, options = {}) {
  const { only = () => true, signal } = options
  const chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK_BYTES
  if (!Number.isInteger(chunkBytes) || chunkBytes <= 0)
    throw new SafetensorsError('InvalidArgument', `chunkBytes must be a positive integer, got ${chunkBytes}`)
  const [ta, tb] = [await tableOf(a), await tableOf(b)]
  /** @type {CompareResult} */
  const result = { onlyInA: [], onlyInB: [], changed: [], identical: 0 }
  /** @type {string[]} */
  const compared = []
  for (const [name, x] of ta) {
    if (!only(name)) continue
    const y = tb.get(name)
    if (!y) {
      result.onlyInA.push(name)
      continue
    }
    const sides = { a: { dtype: x.dtype, shape: shapeJson(x.shape) }, b: { dtype: y.dtype, shape: shapeJson(y.shape) } }
    const sameShape = x.shape.length === y.shape.length && x.shape.every((d, i) => String(d) === String(y.shape[i]))
    if (!sameShape || x.dtype !== y.dtype) {
      result.changed.push({ name, kind: sameShape ? 'dtype' : 'shape', maxAbsDiff: null, meanAbsDiff: null, relativeChange: null,
        ...sides, values: elementCount(x.shape), changedValues: null, nonFiniteChanges: null })
      continue
    }
    compared.push(name)
  }
  for (const name of tb.keys()) if (only(name) && !ta.has(name)) result.onlyInB.push(name)
  const total = compared.reduce((n, name) => n + 2 * /** @type {any} */ (ta.get(name)).byteLength, 0)
  const core = await loadCore()
  const scratch = new Scratch(core)
  let loaded = 0
  try {
    options.onProgress?.({ loaded, total })
    for (const name of compared) {
      throwIfAborted(signal)
      const info = /** @type {{ dtype: string, shape: any[], byteLength: number }} */ (ta.get(name))
      const base = loaded
      const acc = await compareTensor(core, scratch, a, b, name, info, {
        chunkBytes, signal, onBytes: (n) => options.onProgress?.({ loaded: base + 2 * n, total }),
      })
      loaded = base + 2 * info.byteLength
      if (acc.bytesEqual) {
        result.identical++
        continue
      }
      const side = { dtype: info.dtype, shape: shapeJson(info.shape) }
      result.changed.push({ name, kind: 'values', ...numbers(acc, info.dtype), a: side, b: side, values: elementCount(info.shape),
        changedValues: acc.valued ? acc.changed : null, nonFiniteChanges: acc.valued ? acc.nonFinite : null })
    }
  } finally {
    scratch.free()
  }
  // In A's order, as the names only in A.
  const order = new Map([...ta.keys()].map((name, i) => [name, i]))
  result.changed.sort((x, y) => /** @type {number} */ (order.get(x.name)) - /** @type {number} */ (order.get(y.name)))
  return result
}

/**
 * @param {Acc} acc @param {string} dtype
 * @returns {{ maxAbsDiff: number | null, meanAbsDiff: number | null, relativeChange: number | null }}
 */
function numbers(acc, dtype) {
  if (!acc.valued || dtype.startsWith('F6')) return { maxAbsDiff: null, meanAbsDiff: null, relativeChange: null }
  const change = Math.sqrt(acc.sumD2)
  const base = Math.sqrt(acc.sumA2)
  return {
    maxAbsDiff: acc.count > 0 ? acc.max : null,
    meanAbsDiff: acc.count > 0 ? acc.sum / acc.count : null,
    relativeChange: change === 0 ? 0 : base > 0 ? change / base : null,
  }
}

/**
 * The running sums of one tensor's comparison.
 * @typedef {{ bytesEqual: boolean, valued: boolean, count: number, max: number, sum: number,
 *   sumD2: number, sumA2: number, changed: number, nonFinite: number }} Acc
 *   valued: its dtype has values (not F6); count: elements where both values are finite
 */

/** Float32 scratch for decoding in the core, one per side, allocated on first use. */
class Scratch {
  /** @param {any} core */
  constructor(core) {
    this.core = core
    this.a = 0
    this.b = 0
  }

  ensure() {
    if (!this.a) this.a = heapAlloc(this.core, DECODE_ELEMENTS * 4)
    if (!this.b) this.b = heapAlloc(this.core, DECODE_ELEMENTS * 4)
  }

  free() {
    if (this.a) heapFree(this.core, this.a)
    if (this.b) heapFree(this.core, this.b)
    this.a = this.b = 0
  }
}

/** The typed views that hold a dtype's values as they are stored. */
const DIRECT = /** @type {Record<string, any>} */ ({
  F32: Float32Array, F64: Float64Array, I8: Int8Array, U8: Uint8Array, BOOL: Uint8Array, I16: Int16Array,
  U16: Uint16Array, I32: Int32Array, U32: Uint32Array, I64: BigInt64Array, U64: BigUint64Array, C64: Float32Array,
})

/**
 * Reads one tensor from both sides in step and compares it.
 * @param {any} core @param {Scratch} scratch @param {AnyFile} a @param {AnyFile} b @param {string} name
 * @param {{ dtype: string, shape: any[], byteLength: number }} info
 * @param {{ chunkBytes: number, signal?: AbortSignal, onBytes: (n: number) => void }} options
 * @returns {Promise<Acc>}
 */
async function compareTensor(core, scratch, a, b, name, info, options) {
  const { dtype } = info
  const bits = DTYPE_BITS[dtype]
  const elements = elementCount(info.shape)
  /** @type {Acc} */
  const acc = { bytesEqual: true, valued: !dtype.startsWith('F6'), count: 0, max: 0, sum: 0, sumD2: 0, sumA2: 0, changed: 0, nonFinite: 0 }
  if (info.byteLength === 0) return acc
  const read = { chunkBytes: options.chunkBytes, signal: options.signal }
  const ia = a.chunks(name, read)[Symbol.asyncIterator]()
  const ib = b.chunks(name, read)[Symbol.asyncIterator]()
  // Each side's current piece by heap address (a view is detached when the heap grows, as the
  // other side's first read or the scratch may make it), and how much of it is used.
  /** @type {{ ptr: number, length: number, used: number } | null} */
  let pa = null
  /** @type {{ ptr: number, length: number, used: number } | null} */
  let pb = null
  let done = 0
  let seen = 0
  /** @param {AsyncIterator<import('./io/stream.js').Chunk>} it */
  const next = async (it) => {
    const r = await it.next()
    if (r.done) throw new SafetensorsError('ShortRead', `${JSON.stringify(name)} ended after ${done} of its ${info.byteLength} bytes`, { tensor: name })
    return { ptr: r.value.data.byteOffset, length: r.value.data.byteLength, used: 0 }
  }
  let finished = false
  try {
    while (done < info.byteLength) {
      if (!pa || pa.used === pa.length) pa = await next(ia)
      if (!pb || pb.used === pb.length) pb = await next(ib)
      const n = Math.min(pa.length - pa.used, pb.length - pb.used)
      const at = pa.ptr + pa.used
      const bt = pb.ptr + pb.used
      // F4: two elements a byte; the tensor's last byte may hold one.
      const count = bits === 4 ? Math.min(n * 2, elements - seen) : (n * 8) / bits
      const equal = sameBytes(core.HEAPU8, at, bt, n)
      if (!equal) acc.bytesEqual = false
      if (acc.valued) compareValues(core, scratch, dtype, at, equal ? 0 : bt, count, acc)
      pa.used += n
      pb.used += n
      done += n
      seen += count
      options.onBytes(done)
    }
    // Each side read to its end, not left at its last piece: a URL's stream is then done with
    // its response (leaving it there can wait on the response's end forever).
    for (const it of [ia, ib]) if (!(await it.next()).done) throw new Error(`internal: ${JSON.stringify(name)} gave more than its ${info.byteLength} bytes`)
    finished = true
  } finally {
    if (!finished) {
      // A failure: each side stops where it is (frees its buffers, aborts its read ahead).
      ia.return?.(undefined).catch(() => {})
      ib.return?.(undefined).catch(() => {})
    }
  }
  return acc
}

/**
 * Adds `count` elements of `dtype` at heap addresses `at` (A) and `bt` (B) to the sums; `bt` 0:
 * B's bytes are A's, only ||A|| and the finite count need them.
 * @param {any} core @param {Scratch} scratch @param {string} dtype
 * @param {number} at @param {number} bt @param {number} count @param {Acc} acc
 */
function compareValues(core, scratch, dtype, at, bt, count, acc) {
  const direct = DIRECT[dtype]
  if (direct) {
    const per = dtype === 'C64' ? 2 : 1
    const va = heapArray(core, direct, at, count * per)
    const vb = bt ? heapArray(core, direct, bt, count * per) : va
    if (dtype === 'C64') compareComplex(va, vb, acc)
    else if (direct === BigInt64Array || direct === BigUint64Array) compareBigInts(va, vb, acc)
    else compareNumbers(va, vb, acc)
    return
  }
  // F16, BF16, F8, F4: decoded to float32 in the core, a slice of elements at a time.
  scratch.ensure()
  const bits = DTYPE_BITS[dtype]
  for (let s = 0; s < count; s += DECODE_ELEMENTS) {
    const m = Math.min(DECODE_ELEMENTS, count - s)
    const offset = (s * bits) / 8  // whole bytes: DECODE_ELEMENTS is even
    toFloat32Into(core, dtype, at + offset, m, scratch.a)
    if (bt) toFloat32Into(core, dtype, bt + offset, m, scratch.b)
    const va = heapArray(core, Float32Array, scratch.a, m)
    compareNumbers(va, bt ? heapArray(core, Float32Array, scratch.b, m) : va, acc)
  }
}

/**
 * @param {ArrayLike<number>} va @param {ArrayLike<number>} vb @param {Acc} acc
 */
function compareNumbers(va, vb, acc) {
  let { max } = acc
  let count = 0
  let sum = 0
  let sumD2 = 0
  let sumA2 = 0
  let changed = 0
  let nonFinite = 0
  for (let i = 0; i < va.length; i++) {
    const x = va[i]
    const y = vb[i]
    if (x === y) {
      if (x - x === 0) {  // finite (Inf - Inf is NaN)
        count++
        sumA2 += x * x
      }
      continue
    }
    if (x !== x && y !== y) continue  // NaN and NaN
    changed++
    if (x - x !== 0 || y - y !== 0) {
      nonFinite++
      continue
    }
    const d = Math.abs(y - x)
    count++
    sum += d
    sumD2 += d * d
    sumA2 += x * x
    if (d > max) max = d
  }
  acc.max = max
  acc.count += count
  acc.sum += sum
  acc.sumD2 += sumD2
  acc.sumA2 += sumA2
  acc.changed += changed
  acc.nonFinite += nonFinite
}

/** I64 and U64: the difference taken exactly, then as a number. @param {any} va @param {any} vb @param {Acc} acc */
function compareBigInts(va, vb, acc) {
  for (let i = 0; i < va.length; i++) {
    const x = va[i]
    const y = vb[i]
    const ax = Number(x)
    acc.count++
    acc.sumA2 += ax * ax
    if (x === y) continue
    const d = Math.abs(Number(y - x))
    acc.changed++
    acc.sum += d
    acc.sumD2 += d * d
    if (d > acc.max) acc.max = d
  }
}

/** C64: (re, im) pairs; the modulus of the difference. @param {Float32Array} va @param {Float32Array} vb @param {Acc} acc */
function compareComplex(va, vb, acc) {
  for (let i = 0; i < va.length; i += 2) {
    const [xr, xi, yr, yi] = [va[i], va[i + 1], vb[i], vb[i + 1]]
    const same = (/** @type {number} */ p, /** @type {number} */ q) => p === q || (p !== p && q !== q)
    const finite = xr - xr === 0 && xi - xi === 0 && yr - yr === 0 && yi - yi === 0
    if (same(xr, yr) && same(xi, yi)) {
      if (finite) {
        acc.count++
        acc.sumA2 += xr * xr + xi * xi
      }
      continue
    }
    acc.changed++
    if (!finite) {
      acc.nonFinite++
      continue
    }
    const d = Math.hypot(yr - xr, yi - xi)
    acc.count++
    acc.sum += d
    acc.sumD2 += d * d
    acc.sumA2 += xr * xr + xi * xi
    if (d > acc.max) acc.max = d
  }
}

/**
 * Whether the `n` bytes at `at` and at `bt` of `heap` are the same: four at a time where both
 * start on a multiple of four (the pieces of f.chunks do), the rest one by one.
 * @param {Uint8Array} heap @param {number} at @param {number} bt @param {number} n
 */
function sameBytes(heap, at, bt, n) {
  let i = 0
  if (at % 4 === 0 && bt % 4 === 0) {
    const words = n >>> 2
    const wa = new Int32Array(heap.buffer, at, words)
    const wb = new Int32Array(heap.buffer, bt, words)
    for (; i < words; i++) if (wa[i] !== wb[i]) return false
    i = words * 4
  }
  for (; i < n; i++) if (heap[at + i] !== heap[bt + i]) return false
  return true
}
