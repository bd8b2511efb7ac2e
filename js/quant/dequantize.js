/**
 * Dequantizes one weight found by ./detect.js into a float32 Tensor on the wasm heap. Loaded on
 * first use. Each scheme is a plan: parts read whole (scales, zeros, maps: small next to the
 * weight), then steps that each read a chunk of stored rows (about CHUNK_BYTES) and decode it
 * with a kernel of ./kernels.js straight into the output. The heap holds the output, the small
 * parts and one chunk at a time. Where the stored layout follows the logical rows (all but GPTQ
 * and AWQ, which store [in, out]) a slice reads only the rows it covers.
 */
import { heapAlloc, heapArray, heapFree } from '../core/index.js'
import { DTYPE_BITS, elementCount } from '../dtypes.js'
import { SafetensorsError, throwIfAborted } from '../errors.js'
import { Tensor } from '../tensor.js'
import { loadKernels } from './kernels.js'

const CHUNK_BYTES = 4 << 20

/**
 * @typedef {import('./detect.js').QuantizedWeight} QuantizedWeight
 * @typedef {import('./detect.js').PartInfo} PartInfo
 * @typedef {{ name: string, start: number, length: number }} Range
 * @typedef {{ core: any, get: (name: string) => PartInfo,
 *   read: (ranges: Range[], options: { signal?: AbortSignal }) => Promise<number[]> }} PartReader
 *   read: the ranges' bytes into heap allocations (one each, the caller frees them), in order
 * @typedef {{ reads: Range[], run: (ptrs: number[]) => void }} Step
 * @typedef {{ slice?: [number | null | undefined, number | null | undefined],
 *   signal?: AbortSignal, onProgress?: (p: { loaded: number, total: number }) => void }} DequantizeOptions
 */

/**
 * @param {PartReader} reader
 * @param {QuantizedWeight} entry
 * @param {DequantizeOptions} [options]
 * @returns {Promise<Tensor>}
 */
export async function dequantize(reader, entry, options = {}) {
  const { core } = reader
  const { signal } = options
  throwIfAborted(signal)
  const kernels = await loadKernels(core)
  const [a, b] = rowRange(options.slice, entry)
  const inner = elementCount(entry.shape.slice(1))
  const shape = entry.shape.length === 0 ? [] : [b - a, ...entry.shape.slice(1)]
  const count = (b - a) * inner
  const out = heapAlloc(core, count * 4)
  /** @type {number[]} */
  const owned = []
  const alloc = (/** @type {number} */ n) => {
    const ptr = heapAlloc(core, n)
    owned.push(ptr)
    return ptr
  }
  try {
    /** @type {Context} */
    const ctx = { reader, entry, kernels, out, a, b, inner, alloc, core, options }
    const plan = PLANS[entry.scheme]
    const { whole, steps } = plan(ctx)
    const total = [...whole, ...steps.flatMap((s) => s.reads)].reduce((sum, r) => sum + r.length, 0)
    let loaded = 0
    /** @param {Range[]} reads */
    const read = async (reads) => {
      throwIfAborted(signal)
      const ptrs = await reader.read(reads, { signal })
      owned.push(...ptrs)
      for (const r of reads) loaded += r.length
      options.onProgress?.({ loaded, total })
      return ptrs
    }
    const wholePtrs = await read(whole)
    const prepared = ctx.prepare?.(wholePtrs)
    for (const step of steps) {
      const ptrs = await read(step.reads)
      step.run(prepared ? [...ptrs, ...prepared] : [...ptrs, ...wholePtrs])
      for (const p of ptrs) free(owned, core, p)
    }
    if (count === 0) options.onProgress?.({ loaded, total })
  } catch (error) {
    heapFree(core, out)
    throw error
  } finally {
    for (const p of owned) heapFree(core, p)
  }
  return new Tensor(core, out, entry.name, 'F32', shape, count * 4)
}

/** @param {number[]} owned @param {any} core @param {number} ptr */
function free(owned, core, ptr) {
  owned.splice(owned.indexOf(ptr), 1)
  heapFree(core, ptr)
}

/**
 * The leading logical rows to decode, from the `slice` option ([start, stop], negatives from the
 * end, null for the dimension's bound).
 * @param {DequantizeOptions['slice']} slice @param {QuantizedWeight} entry
 * @returns {[number, number]}
 */
function rowRange(slice, entry) {
  const rows = entry.shape.length === 0 ? 1 : entry.shape[0]
  if (slice === undefined || slice === null) return [0, rows]
  const tensor = entry.name
  const bound = (/** @type {unknown} */ v) => v === null || v === undefined || Number.isInteger(v)
  if (!Array.isArray(slice) || slice.length > 2 || !bound(slice[0]) || !bound(slice[1])) {
    throw new SafetensorsError('InvalidSlice', `dequantize's slice is [start, stop] over the leading dimension ` +
      `(integers or null), got ${JSON.stringify(slice)}`, { tensor })
  }
  if (entry.shape.length === 0) throw new SafetensorsError('TooManySlices', 'a scalar weight has no rows to slice', { tensor })
  const at = (/** @type {any} */ v, /** @type {number} */ fallback) => (v === null || v === undefined ? fallback : v < 0 ? v + rows : v)
  const start = at(slice[0], 0)
  const stop = at(slice[1], rows)
  if (start < 0 || stop > rows || start > stop) {
    throw new SafetensorsError('SliceOutOfRange', `rows ${JSON.stringify(slice)} of ${JSON.stringify(tensor)}: the leading ` +
      `dimension has ${rows} rows (from ${-rows} to ${rows}, start before stop)`, { tensor })
  }
  return [start, stop]
}

/**
 * @typedef {{ reader: PartReader, entry: QuantizedWeight, kernels: any, out: number, a: number,
 *   b: number, inner: number, alloc: (n: number) => number, core: any, options: DequantizeOptions,
 *   prepare?: (whole: number[]) => number[] }} Context
 *   prepare: turns the whole parts' pointers into what each step's run gets after its own
 */

const bytesOf = (/** @type {string} */ dtype) => DTYPE_BITS[dtype] / 8

/** @param {number} perRow stored bytes per row @param {number} [multiple] */
function rowsPerChunk(perRow, multiple = 1) {
  const rows = Math.max(1, Math.floor(CHUNK_BYTES / Math.max(1, perRow)))
  return rows >= multiple ? rows - (rows % multiple) : rows
}

/**
 * Steps over rows [a, b) in chunks of `size`.
 * @param {number} a @param {number} b @param {number} size @param {(r0: number, r1: number) => Step} step
 */
function chunks(a, b, size, step) {
  const steps = []
  for (let r0 = a; r0 < b; r0 += size) steps.push(step(r0, Math.min(b, r0 + size)))
  return steps
}

/** @param {Context} ctx @param {string} name @returns {Range} */
function whole(ctx, name) {
  const info = ctx.reader.get(name)
  return { name, start: 0, length: (elementCount(info.shape) * DTYPE_BITS[info.dtype]) / 8 }
}

/** @param {Context} ctx @param {number} ptr */
const f32At = (ctx, ptr) => heapArray(ctx.core, Float32Array, ptr, 1)[0]

/** @type {Record<string, (ctx: Context) => { whole: Range[], steps: Step[] }>} */
const PLANS = {
  'fp8-block'(ctx) {
    const { entry, a, b, out, kernels } = ctx
    const [, cols] = entry.shape
    const [blockRows, blockCols] = entry.details.block
    const s = ctx.reader.get(entry.parts.scaleInv)
    const scaleCols = Number(s.shape[1])
    const scaleRow = scaleCols * bytesOf(s.dtype)
    const steps = chunks(a, b, rowsPerChunk(cols, blockRows), (r0, r1) => {
      const s0 = Math.floor(r0 / blockRows)
      const s1 = Math.floor((r1 - 1) / blockRows) + 1
      return {
        reads: [{ name: entry.parts.weight, start: r0 * cols, length: (r1 - r0) * cols },
          { name: entry.parts.scaleInv, start: s0 * scaleRow, length: (s1 - s0) * scaleRow }],
        run: ([w, scales]) => kernels.fp8Block({ w, scales, scaleDtype: s.dtype, out: out + (r0 - a) * cols * 4,
          rows: r1 - r0, cols, firstRow: r0, blockRows, blockCols, scaleCols }),
      }
    })
    return { whole: [], steps }
  },

  fp8: scaled,
  int8: scaled,

  mxfp4(ctx) {
    const { entry, a, b, inner, out, kernels, core } = ctx
    // Logical elements [e0, e1) in groups of 32; a slice of a rank-1 weight may cut a group.
    const e0 = a * inner
    const e1 = b * inner
    const g0 = Math.floor(e0 / 32)
    const g1 = Math.ceil(e1 / 32)
    const aligned = e0 % 32 === 0 && e1 % 32 === 0
    const target = aligned ? out : ctx.alloc((g1 - g0) * 128)
    const steps = chunks(g0, g1, rowsPerChunk(17), (q0, q1) => ({
      reads: [{ name: entry.parts.blocks, start: q0 * 16, length: (q1 - q0) * 16 },
        { name: entry.parts.scales, start: q0, length: q1 - q0 }],
      run: ([blocks, scales]) => {
        kernels.mxfp4({ blocks, scales, out: target + (q0 - g0) * 128, groups: q1 - q0 })
        if (!aligned && q1 === g1) core.HEAPU8.copyWithin(out, target + (e0 - g0 * 32) * 4, target + (e1 - g0 * 32) * 4)
      },
    }))
    return { whole: [], steps }
  },

  nvfp4(ctx) {
    const { entry, a, b, out, kernels } = ctx
    const [, cols] = entry.shape
    const ct = entry.details.format === 'compressed-tensors'
    const scaleCols = Number(ctx.reader.get(entry.parts.scale).shape[1])
    const { group } = entry.details
    let globalScale = 0
    ctx.prepare = ([g]) => {
      globalScale = f32At(ctx, g)
      return []
    }
    const steps = chunks(a, b, rowsPerChunk(cols / 2 + scaleCols), (r0, r1) => ({
      reads: [{ name: entry.parts.packed, start: (r0 * cols) / 2, length: ((r1 - r0) * cols) / 2 },
        { name: entry.parts.scale, start: r0 * scaleCols, length: (r1 - r0) * scaleCols }],
      run: ([packed, scales]) => kernels.nvfp4({ packed, scales, out: out + (r0 - a) * cols * 4, rows: r1 - r0,
        cols, group, scaleCols, globalScale, divide: ct }),
    }))
    return { whole: [whole(ctx, ct ? entry.parts.globalScale : entry.parts.scale2)], steps }
  },

  gptq(ctx) {
    const { entry, a, b, out, kernels } = ctx
    const [outF, inF] = entry.shape
    const { bits, group } = entry.details
    const zeroOffset = entry.details.format === 'gptq_v2' ? 0 : 1
    const s = ctx.reader.get(entry.parts.scales)
    const groups = Number(s.shape[0])
    const rowBytes = outF * 4
    const parts = [whole(ctx, entry.parts.qzeros), whole(ctx, entry.parts.scales)]
    if (entry.parts.gIdx) parts.push(whole(ctx, entry.parts.gIdx))
    ctx.prepare = ([qzeros, scales, given]) => {
      const gIdx = given ?? ctx.alloc(inF * 4)
      const g = heapArray(ctx.core, Int32Array, gIdx, inF)
      if (!given) for (let i = 0; i < inF; i++) g[i] = Math.floor(i / group)
      for (let i = 0; i < inF; i++) {
        if (g[i] < 0 || g[i] >= groups) {
          throw new SafetensorsError('QuantIndexOutOfRange', `g_idx ${JSON.stringify(entry.parts.gIdx)} of ` +
            `${JSON.stringify(entry.name)} puts input ${i} in group ${g[i]}; the scales have ${groups} groups (0 to ${groups - 1})`,
          { tensor: entry.name })
        }
      }
      return [qzeros, scales, gIdx]
    }
    // Inputs in chunks of 32: a whole number of stored rows at any bit width.
    const size = 32 * Math.max(1, Math.floor(CHUNK_BYTES / (bits * rowBytes)))
    const steps = a === b ? [] : chunks(0, inF, size, (i0, i1) => {
      const q0 = (i0 * bits) / 32
      const q1 = Math.ceil((i1 * bits) / 32)
      return {
        reads: [{ name: entry.parts.qweight, start: q0 * rowBytes, length: (q1 - q0) * rowBytes }],
        run: ([qweight, qzeros, scales, gIdx]) => kernels.gptq({ qweight, qzeros, scales, scaleDtype: s.dtype, gIdx, out,
          inFeatures: inF, outFeatures: outF, firstIn: i0, inCount: i1 - i0, firstOut: a, outCount: b - a, bits, zeroOffset }),
      }
    })
    return { whole: parts, steps }
  },

  awq(ctx) {
    const { entry, a, b, out, kernels } = ctx
    const [outF, inF] = entry.shape
    const s = ctx.reader.get(entry.parts.scales)
    const rowBytes = outF / 2
    const steps = a === b ? [] : chunks(0, inF, rowsPerChunk(rowBytes), (i0, i1) => ({
      reads: [{ name: entry.parts.qweight, start: i0 * rowBytes, length: (i1 - i0) * rowBytes }],
      run: ([qweight, qzeros, scales]) => kernels.awq({ qweight, qzeros, scales, scaleDtype: s.dtype, out, inFeatures: inF,
        outFeatures: outF, firstIn: i0, inCount: i1 - i0, firstOut: a, outCount: b - a, group: entry.details.group }),
    }))
    return { whole: [whole(ctx, entry.parts.qzeros), whole(ctx, entry.parts.scales)], steps }
  },

  'bnb-nf4': bnb,
  'bnb-fp4': bnb,

  'ct-pack'(ctx) {
    const { entry, a, b, out, kernels } = ctx
    const [outF, inF] = entry.shape
    const { bits, group } = entry.details
    const cols = Math.ceil(inF / Math.floor(32 / bits))
    const s = ctx.reader.get(entry.parts.scale)
    const groups = Number(s.shape[1])
    const scaleRow = groups * bytesOf(s.dtype)
    const zp = entry.parts.zeroPoint
    const steps = chunks(a, b, rowsPerChunk(cols * 4 + scaleRow), (r0, r1) => ({
      reads: [{ name: entry.parts.packed, start: r0 * cols * 4, length: (r1 - r0) * cols * 4 },
        { name: entry.parts.scale, start: r0 * scaleRow, length: (r1 - r0) * scaleRow }],
      run: ([packed, scales, zeroPoints]) => kernels.ctPack({ packed, scales, scaleDtype: s.dtype, zeroPoints: zp ? zeroPoints : 0,
        out: out + (r0 - a) * inF * 4, rows: r1 - r0, firstRow: r0, inFeatures: inF, bits, group, groups, outFeatures: outF }),
    }))
    return { whole: zp ? [whole(ctx, zp)] : [], steps }
  },
}

/** bitsandbytes 4-bit (nf4 and fp4 decode alike, through the stored quant map). @param {Context} ctx */
function bnb(ctx) {
  const { entry, a, b, inner, out, kernels } = ctx
  const { blocksize, nested, nestedBlocksize, nestedOffset } = entry.details
  const e0 = a * inner
  const e1 = b * inner
  const absmaxBytes = nested ? 1 : 4
  const size = Math.max(blocksize, Math.floor((2 * CHUNK_BYTES) / blocksize) * blocksize)
  const parts = [whole(ctx, entry.parts.quantMap)]
  if (nested) parts.push(whole(ctx, entry.parts.nestedQuantMap), whole(ctx, entry.parts.nestedAbsmax))
  const scratch = nested ? ctx.alloc((Math.ceil(size / blocksize) + 1) * 4) : 0
  // Chunks start on block boundaries after the first.
  const steps = []
  for (let k0 = e0; k0 < e1;) {
    const k1 = Math.min(e1, (Math.floor(k0 / blocksize) * blocksize) + size)
    const m0 = Math.floor(k0 / blocksize)
    const m1 = Math.ceil(k1 / blocksize)
    const first = k0
    steps.push({
      reads: [{ name: entry.parts.weight, start: Math.floor(k0 / 2), length: Math.ceil(k1 / 2) - Math.floor(k0 / 2) },
        { name: entry.parts.absmax, start: m0 * absmaxBytes, length: (m1 - m0) * absmaxBytes }],
      run: (/** @type {number[]} */ [packed, absmax, quantMap, nestedMap, nestedAbsmax]) => {
        let scales = absmax
        if (nested) {
          kernels.nf4Absmax({ absmax, nestedMap, nestedAbsmax, offset: nestedOffset, out: scratch, firstBlock: m0,
            count: m1 - m0, nestedBlock: nestedBlocksize })
          scales = scratch
        }
        kernels.nf4({ packed, absmax: scales, quantMap, out: out + (first - e0) * 4, first, count: k1 - first, blocksize })
      },
    })
    k0 = k1
  }
  return { whole: parts, steps }
}

/**
 * fp8 and int8: a scale per tensor, per output row or per group of a row (and int8's zero
 * points, shaped as the scales), as blocks of [out, in], [1, in] or [1, group] for the block
 * kernels. A per-tensor scale is read whole; per-row ones with their rows.
 * @param {Context} ctx
 */
function scaled(ctx) {
  const { entry, a, b, out, kernels } = ctx
  const [outF, cols] = entry.shape
  const { strategy } = entry.details
  const fp8 = entry.scheme === 'fp8'
  const s = ctx.reader.get(entry.parts.scale)
  const zp = entry.parts.zeroPoint
  const perTensor = strategy === 'tensor'
  const group = strategy === 'group' ? entry.details.group : Math.max(1, cols)
  const scaleCols = strategy === 'group' ? Number(s.shape[1]) : 1
  const blockRows = perTensor ? Math.max(1, outF) : 1
  const scaleRow = scaleCols * bytesOf(s.dtype)
  /** @type {Range[]} */
  const wholeParts = []
  if (perTensor) wholeParts.push(whole(ctx, entry.parts.scale))
  if (zp && (perTensor || fp8)) wholeParts.push(whole(ctx, zp))
  if (fp8 && zp) {
    // compressed-tensors saved the zero points of symmetric FP8 (all zero) before it learned to
    // leave them out: those are decoded; any other is not.
    ctx.prepare = (ptrs) => {
      const bytes = heapArray(ctx.core, Uint8Array, ptrs[ptrs.length - 1], wholeParts[wholeParts.length - 1].length)
      if (bytes.some((v) => (v & 0x7f) !== 0)) {
        throw new SafetensorsError('UnsupportedQuantization', `the zero point ${JSON.stringify(zp)} of ${JSON.stringify(entry.name)} ` +
          'is not zero: asymmetric FP8 is not decoded', { tensor: entry.name })
      }
      return ptrs.slice(0, -1)
    }
  }
  const rowBytes = cols
  const perStep = rowBytes + (perTensor ? 0 : scaleRow + (zp && !fp8 ? scaleCols : 0))
  const steps = chunks(a, b, rowsPerChunk(perStep), (r0, r1) => {
    /** @type {Range[]} */
    const reads = [{ name: entry.parts.weight, start: r0 * rowBytes, length: (r1 - r0) * rowBytes }]
    if (!perTensor) reads.push({ name: entry.parts.scale, start: r0 * scaleRow, length: (r1 - r0) * scaleRow })
    if (!perTensor && zp && !fp8) reads.push({ name: zp, start: r0 * scaleCols, length: (r1 - r0) * scaleCols })
    return {
      reads,
      run: ([w, scales, zeroPoints]) => {
        const o = { w, scales, scaleDtype: s.dtype, out: out + (r0 - a) * cols * 4, rows: r1 - r0, cols,
          firstRow: perTensor ? 0 : r0, blockRows, blockCols: group, scaleCols }
        if (fp8) kernels.fp8Block(o)
        else kernels.int8Block({ ...o, zeroPoints: zp ? zeroPoints : 0 })
      },
    }
  })
  return { whole: wholeParts, steps }
}
