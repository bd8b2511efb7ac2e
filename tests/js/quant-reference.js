/**
 * Independent plain-JS decoders of the quantized schemes of issue 15, for the tests: nothing here
 * comes from js/. Each decoder takes the stored parts as typed arrays (the bytes a file holds) and
 * returns the logical weight as a Float32Array in row-major order, computed in float32 with
 * Math.fround after every operation, in the order the producers compute:
 *
 * - fp8-block: DeepSeek-V3 inference/kernel.py weight_dequant: y = f32(x) * s, s = scale_inv of
 *   the [bo, bi] block (a multiply despite the name).
 * - mxfp4: gpt-oss torch/weights.py: lut[nibble] (low nibble first) then torch.ldexp(., scale -
 *   127); recent PyTorch dispatches an integer exponent to std::ldexp, so the result is the exact
 *   product rounded once (scale 255 and nibble 0.5 give 2^127, not inf).
 * - nvfp4: compressed-tensors (forward.py _dequantize: scale.to(f32) / global_scale, then
 *   x_q * scale) and ModelOpt (NVFP4QTensor.dequantize: scale.to(f32) * double_scale, then
 *   e2m1_values[nibble] * per_block_scale). Low nibble first in both.
 * - gptq: AutoGPTQ qlinear_cuda_old.py: scales * (weight - (zeros + 1)) with the zeros unpacked
 *   and masked before the + 1 (v1); gptq_v2 stores the zero as is. A column's values are a
 *   little-endian bit stream down the rows of qweight (3 bits cross words), a group's zeros a bit
 *   stream along the row of qzeros.
 * - awq: AutoAWQ utils/packing_utils.py dequantize_gemm: unpack, reverse the [0,2,4,6,1,3,5,7]
 *   packing order, (iweight - izeros) * scales.
 * - bnb-nf4: bitsandbytes functional.dequantize_4bit / backends/default/ops.py: high nibble first,
 *   code[nibble] * absmax[block]; nested: absmax = code2[qabsmax] * absmax2[block / 256] + offset.
 * - ct-pack: compressed-tensors pack_quantized.py unpack_from_int32 (low bits first, offset
 *   2^(bits-1), zero points packed along the output dimension) and _dequantize: (q - zp) * scale.
 *
 * NaN: a product with a NaN operand keeps that operand's bits, made quiet (what the producers' CPU
 * code gives); E4M3 NaN (0x7F/0xFF) converts to float32 as c10's fp8e4m3fn_to_fp32_value does:
 * sign | 0x7FF00000.
 */

const F = Math.fround
const scratchF = new Float32Array(1)
const scratchU = new Uint32Array(scratchF.buffer)

/** The float32 bit pattern of fround(x). @param {number} x */
export function bitsOf(x) {
  scratchF[0] = x
  return scratchU[0]
}

/** The float32 of a bit pattern (NaN payloads do not survive a JS number). @param {number} bits */
export function fromBits(bits) {
  scratchU[0] = bits
  return scratchF[0]
}

/** @param {number} bits */
const isNaNBits = (bits) => (bits & 0x7fffffff) > 0x7f800000

/**
 * float32 a * b as bits, NaN operands propagated (quieted) as x86 and the producers' CPU paths do.
 * @param {number} aBits @param {number} bBits
 */
export function mulBits(aBits, bBits) {
  if (isNaNBits(aBits)) return (aBits | 0x00400000) >>> 0
  if (isNaNBits(bBits)) return (bBits | 0x00400000) >>> 0
  return bitsOf(F(fromBits(aBits) * fromBits(bBits)))
}

// --- element conversions --------------------------------------------------------------------

/** F16 bits to its value. @param {number} h */
export function f16Value(h) {
  const sign = h & 0x8000 ? -1 : 1
  const exp = (h >>> 10) & 0x1f
  const mant = h & 0x3ff
  if (exp === 0) return sign * mant * 2 ** -24
  if (exp === 0x1f) return mant ? NaN : sign * Infinity
  return sign * (1 + mant / 1024) * 2 ** (exp - 15)
}

/** BF16 bits to its value. @param {number} b */
export function bf16Value(b) {
  return fromBits((b & 0xffff) << 16)
}

/**
 * E4M3FN byte to float32 bits: no infinities, NaN at 0x7F/0xFF (as sign | 0x7FF00000), max 448,
 * subnormals m * 2^-9.
 * @param {number} byte
 */
export function e4m3Bits(byte) {
  const negative = (byte & 0x80) !== 0
  const exp = (byte >>> 3) & 0xf
  const mant = byte & 7
  if (exp === 0xf && mant === 7) return ((negative ? 0x80000000 : 0) | 0x7ff00000) >>> 0
  const magnitude = exp === 0 ? mant * 2 ** -9 : (8 + mant) * 2 ** (exp - 10)
  return bitsOf(negative ? -magnitude : magnitude)
}

/** @param {number} byte */
export const e4m3Value = (byte) => fromBits(e4m3Bits(byte))

/**
 * A scale tensor's elements as float32 bits, whatever its stored dtype.
 * @param {string} dtype @param {ArrayBufferView} data
 * @returns {Uint32Array}
 */
export function scaleBits(dtype, data) {
  const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
  if (dtype === 'F32') return new Uint32Array(bytes.slice().buffer)
  if (dtype === 'F8_E4M3') return Uint32Array.from(bytes, e4m3Bits)
  const u16 = new Uint16Array(bytes.slice().buffer)
  if (dtype === 'BF16') return Uint32Array.from(u16, (b) => (b << 16) >>> 0)
  if (dtype === 'F16') return Uint32Array.from(u16, (h) => bitsOf(f16Value(h)))
  throw new Error(`scaleBits: ${dtype}`)
}

/** The FP4 E2M1 values, by nibble, sign bit 8: -0 at nibble 8. */
export const FP4 = Object.freeze([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0, -0.5, -1, -1.5, -2, -3, -4, -6])
/**
 * ModelOpt's table (NVFP4QTensor e2m1_values) has a plain 0 at nibble 8: its reference dequantize
 * gives +0 there where compressed-tensors and gpt-oss give -0. Switch here if the project decides
 * otherwise.
 */
export const MODELOPT_NIBBLE8_POSITIVE_ZERO = true
const FP4_MODELOPT = Object.freeze(FP4.map((v, i) => (i === 8 && MODELOPT_NIBBLE8_POSITIVE_ZERO ? 0 : v)))

// --- decoders -------------------------------------------------------------------------------

/**
 * @param {{ weight: Uint8Array, rows: number, cols: number, scales: Uint32Array, scaleCols: number,
 *   block: [number, number] }} p scales: float32 bits [ceil(rows/bo), scaleCols]
 */
export function fp8Block({ weight, rows, cols, scales, scaleCols, block: [bo, bi] }) {
  const out = new Uint32Array(rows * cols)
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const k = r * cols + c
      out[k] = mulBits(e4m3Bits(weight[k]), scales[Math.floor(r / bo) * scaleCols + Math.floor(c / bi)])
    }
  }
  return new Float32Array(out.buffer)
}

/**
 * @param {{ blocks: Uint8Array, scales: Uint8Array }} p blocks [..., G, 16], scales [..., G]
 */
export function mxfp4({ blocks, scales }) {
  const out = new Float32Array(blocks.length * 2)
  for (let g = 0; g < scales.length; g++) {
    const e = scales[g] - 127
    for (let k = 0; k < 16; k++) {
      const b = blocks[g * 16 + k]
      // exact in double, rounded once to float32: ldexpf
      out[g * 32 + 2 * k] = F(FP4[b & 15] * 2 ** e)
      out[g * 32 + 2 * k + 1] = F(FP4[b >> 4] * 2 ** e)
    }
  }
  return out
}

/**
 * @param {{ packed: Uint8Array, rows: number, cols: number, scales: Uint8Array, scaleCols: number,
 *   group: number, global: number, format: 'compressed-tensors' | 'modelopt' }} p
 *   global: weight_global_scale (divides) or weight_scale_2 (multiplies), a float32 value
 */
export function nvfp4({ packed, rows, cols, scales, scaleCols, group, global, format }) {
  const out = new Uint32Array(rows * cols)
  const globalBits = bitsOf(global)
  const table = format === 'modelopt' ? FP4_MODELOPT : FP4
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const s = e4m3Bits(scales[r * scaleCols + Math.floor(c / group)])
      let eff
      if (format === 'modelopt') eff = mulBits(s, globalBits)
      else eff = isNaNBits(s) ? (s | 0x00400000) >>> 0 : bitsOf(F(fromBits(s) / global))
      const b = packed[r * (cols / 2) + (c >> 1)]
      const nib = c & 1 ? b >> 4 : b & 15
      out[r * cols + c] = mulBits(bitsOf(table[nib]), eff)
    }
  }
  return new Float32Array(out.buffer)
}

/**
 * `bits` bits at bit position `bit` of a little-endian stream of 32-bit words, where word w is
 * words[w * stride + column].
 * @param {Int32Array} words @param {number} stride @param {number} column @param {number} bit
 * @param {number} bits
 */
function streamBits(words, stride, column, bit, bits) {
  const w = Math.floor(bit / 32)
  const shift = bit % 32
  let v = (words[w * stride + column] >>> 0) / 2 ** shift
  if (shift + bits > 32) v += (words[(w + 1) * stride + column] >>> 0) * 2 ** (32 - shift)
  return Math.floor(v) % 2 ** bits
}

/**
 * @param {{ qweight: Int32Array, qzeros: Int32Array, scales: Uint32Array, gIdx: Int32Array | null,
 *   inF: number, outF: number, bits: number, group: number, v2?: boolean }} p -> [outF, inF]
 */
export function gptq({ qweight, qzeros, scales, gIdx, inF, outF, bits, group, v2 = false }) {
  const out = new Float32Array(outF * inF)
  const zeroWords = (outF * bits) / 32
  for (let o = 0; o < outF; o++) {
    for (let i = 0; i < inF; i++) {
      const g = gIdx ? gIdx[i] : Math.floor(i / group)
      const q = streamBits(qweight, outF, o, i * bits, bits)
      // qzeros row g is its own stream: word (g, w) = qzeros[g * zeroWords + w]
      const z = streamBits(qzeros.subarray(g * zeroWords, (g + 1) * zeroWords), 1, 0, o * bits, bits)
      out[o * inF + i] = F(fromBits(scales[g * outF + o]) * F(q - (z + (v2 ? 0 : 1))))
    }
  }
  return out
}

/** Output column 8c + j is nibble AWQ_REVERSE_ORDER[j] of word c. */
export const AWQ_REVERSE_ORDER = Object.freeze([0, 4, 1, 5, 2, 6, 3, 7])

/**
 * @param {{ qweight: Int32Array, qzeros: Int32Array, scales: Uint32Array, inF: number,
 *   outF: number, group: number }} p -> [outF, inF]
 */
export function awq({ qweight, qzeros, scales, inF, outF, group }) {
  const out = new Float32Array(outF * inF)
  const words = outF / 8
  for (let o = 0; o < outF; o++) {
    const c = o >> 3
    const shift = 4 * AWQ_REVERSE_ORDER[o & 7]
    for (let i = 0; i < inF; i++) {
      const g = Math.floor(i / group)
      const q = (qweight[i * words + c] >>> shift) & 15
      const z = (qzeros[g * words + c] >>> shift) & 15
      out[o * inF + i] = F(F(q - z) * fromBits(scales[g * outF + o]))
    }
  }
  return out
}

/**
 * @param {{ packed: Uint8Array, n: number, blocksize: number, quantMap: Float32Array,
 *   absmax: Float32Array } | { packed: Uint8Array, n: number, blocksize: number, quantMap: Float32Array,
 *   codes: Uint8Array, nestedMap: Float32Array, nestedAbsmax: Float32Array, offset: number,
 *   nestedBlocksize: number }} p
 */
export function nf4(p) {
  const { packed, n, blocksize, quantMap } = p
  const blocks = Math.ceil(n / blocksize)
  /** @type {Float32Array} */
  let absmax
  if ('absmax' in p) {
    absmax = p.absmax
  } else {
    absmax = new Float32Array(blocks)
    for (let b = 0; b < blocks; b++)
      absmax[b] = F(F(p.nestedMap[p.codes[b]] * p.nestedAbsmax[Math.floor(b / p.nestedBlocksize)]) + F(p.offset))
  }
  const out = new Float32Array(n)
  for (let k = 0; k < n; k++) {
    const byte = packed[k >> 1]
    const nib = k & 1 ? byte & 15 : byte >> 4
    out[k] = F(quantMap[nib] * absmax[Math.floor(k / blocksize)])
  }
  return out
}

/**
 * @param {{ packed: Int32Array, scales: Uint32Array, zeroPoints: Int32Array | null, outF: number,
 *   inF: number, bits: number, group: number }} p scales [outF, groups] -> [outF, inF]
 */
export function ctPack({ packed, scales, zeroPoints, outF, inF, bits, group }) {
  const pf = Math.floor(32 / bits)
  const mask = 2 ** bits - 1
  const offset = 2 ** (bits - 1)
  const words = Math.ceil(inF / pf)
  const groups = Math.ceil(inF / group)
  const out = new Float32Array(outF * inF)
  for (let r = 0; r < outF; r++) {
    for (let i = 0; i < inF; i++) {
      const g = Math.floor(i / group)
      const q = ((packed[r * words + Math.floor(i / pf)] >>> (bits * (i % pf))) & mask) - offset
      const zp = zeroPoints ? ((zeroPoints[Math.floor(r / pf) * groups + g] >>> (bits * (r % pf))) & mask) - offset : 0
      out[r * inF + i] = F(F(q - zp) * fromBits(scales[r * groups + g]))
    }
  }
  return out
}

/**
 * fp8 (compressed-tensors float-quantized, fbgemm_fp8, ModelOpt FP8): f32(e4m3(q)) * scale, the
 * scale of the tensor, of the row, or of the row's group; int8 (compressed-tensors
 * int-quantized, forward.py _dequantize): (q - zp) * scale, zp 0 when none is stored.
 * @param {{ weight: Uint8Array | Int8Array, rows: number, cols: number, scales: Uint32Array,
 *   strategy: 'tensor' | 'channel' | 'group', group?: number, zeroPoints?: Int8Array | null }} p
 *   scales: float32 bits, one, one a row, or ceil(cols / group) a row; weight Uint8Array: E4M3
 *   codes, Int8Array: int8 values
 */
export function scaled({ weight, rows, cols, scales, strategy, group = cols, zeroPoints = null }) {
  const out = new Uint32Array(rows * cols)
  const groups = Math.ceil(cols / group)
  const fp8 = weight instanceof Uint8Array
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const k = r * cols + c
      const at = strategy === 'tensor' ? 0 : strategy === 'channel' ? r : r * groups + Math.floor(c / group)
      if (fp8) {
        out[k] = mulBits(e4m3Bits(weight[k]), scales[at])
      } else {
        const zp = zeroPoints ? zeroPoints[at] : 0
        out[k] = mulBits(bitsOf(weight[k] - zp), scales[at])
      }
    }
  }
  return new Float32Array(out.buffer)
}
