/**
 * Finds the quantized weights of a checkpoint from its tensor names, dtypes and shapes (and two
 * kinds of small tensors that hold a logical shape: compressed-tensors' `weight_shape` and
 * bitsandbytes' quant-state JSON), checks each weight's parts against one another and against the
 * model's `quantization_config` when given, and counts parameters. Reads no tensor data itself:
 * the caller hands it the small values (see shapeCarriers). Decoding is in ./dequantize.js,
 * loaded on first use; this file is part of every reading page, so it stays small.
 */
import { SafetensorsError } from '../errors.js'
import { elementCount } from '../dtypes.js'

/**
 * @typedef {{ dtype: string, shape: any[] }} PartInfo
 * @typedef {{ names: string[], get: (name: string) => PartInfo | undefined,
 *   value: (name: string) => Uint8Array | undefined,
 *   eachStored?: (skip: (name: string) => boolean, visit: (dtype: string, elements: number) => void) => void,
 *   at?: (k: number) => void }} TensorView
 *   value: the bytes of a shape carrier, read at open; eachStored: every name's dtype and element
 *   count but those `skip` takes, as get gives them (a sharded set's, shard by shard, without a
 *   lookup of each name's shard); at: detection is at names[k] (a weight's parts are near their
 *   anchor: a sharded set looks there before looking the name up)
 * @typedef {{ name: string, scheme: string, shape: number[], parts: Record<string, string>,
 *   details: Record<string, any> }} QuantizedWeight
 * @typedef {{ entries: QuantizedWeight[], problems: SafetensorsError[],
 *   byName: Map<string, QuantizedWeight | SafetensorsError>, partNames: Set<string>,
 *   partTotals?: Record<string, { elements: number, tensors: number }> | null }} Detection
 *   partTotals: the parts' elements and tensors by dtype, when no tensor is a part twice
 */

const BNB_STATE = /\.quant_state\.bitsandbytes__(nf4|fp4)$/
/** The name ending of an FP8 block weight's scales, which marks the weight. */
const FP8_KIND = '.weight_scale_inv'
const MAX_STATE_BYTES = 1 << 16

/**
 * The stored names whose bytes detection needs (ct-pack shapes, bnb quant states): small, read
 * once at open so that quantized() and parameterCount() stay synchronous and exact.
 * @param {string[]} names @param {(name: string) => PartInfo | undefined} get
 */
export function shapeCarriers(names, get) {
  const out = []
  for (const name of names) {
    const shape = name.endsWith('.weight_shape')
    if (!shape && !BNB_STATE.test(name)) continue
    const info = /** @type {PartInfo} */ (get(name))
    if (shape ? info.dtype === 'I64' && info.shape.length === 1 && info.shape[0] === 2
      : info.dtype === 'U8' && elementCount(info.shape) <= MAX_STATE_BYTES) out.push(name)
  }
  return out
}

/**
 * The model's quantization config, from a `quantization_config` or a whole config.json.
 * @param {any} config
 * @returns {Record<string, any> | null}
 */
export function quantConfig(config) {
  if (config === undefined || config === null) return null
  if (typeof config !== 'object' || Array.isArray(config))
    throw new SafetensorsError('InvalidArgument', 'options.quantization is a quantization_config object or a whole config.json object')
  return config.quantization_config ?? config
}

/**
 * @param {TensorView} view
 * @param {Record<string, any> | null} config from quantConfig
 * @returns {Detection}
 */
export function detect(view, config) {
  const steps = detectSteps(view, config)
  let step = steps.next()
  while (!step.done) step = steps.next()
  return step.value
}

/** Names looked at between two pauses of detectPausing: tens of milliseconds' work. */
const DETECT_BLOCK = 65_536

/**
 * detect, awaiting `pause()` between blocks of names: at 500,000 names detection takes about
 * half a second, which a page (or a server's event loop) should not spend in one task.
 * @param {TensorView} view @param {Record<string, any> | null} config
 * @param {() => Promise<void>} pause
 * @returns {Promise<Detection>}
 */
export async function detectPausing(view, config, pause) {
  const steps = detectSteps(view, config)
  for (let step = steps.next(); ; step = steps.next()) {
    if (step.done) return step.value
    await pause()
  }
}

/**
 * detect's work, yielding after each DETECT_BLOCK names.
 * @param {TensorView} view @param {Record<string, any> | null} config
 * @returns {Generator<void, Detection>}
 */
function* detectSteps(view, config) {
  /** @type {QuantizedWeight[]} */
  const entries = []
  /** @type {SafetensorsError[]} */
  const problems = []
  // Every anchored name and what it gave, for byName (a Map made on first use: at 500,000 names
  // each operation on a table that size costs about a microsecond here).
  /** @type {string[]} */
  const names = []
  /** @type {(QuantizedWeight | SafetensorsError)[]} */
  const results = []
  // One kind of anchor (one name ending) gives each weight one logical name; a second kind can
  // give a name twice, so from then on the names are checked (the first anchor wins).
  /** @type {Set<string>} */
  const kinds = new Set()
  /** @type {Set<string> | null} */
  let seen = null
  /** @type {Record<string, { elements: number, tensors: number }>} */
  const partTotals = {}
  /** @type {PartInfo[]} */
  const infos = []
  const all = view.names
  for (let k = 0; k < all.length; k++) {
    if (k > 0 && k % DETECT_BLOCK === 0) yield
    const stored = all[k]
    view.at?.(k)
    const anchor = anchorOf(stored, view)
    if (!anchor) continue
    if (!kinds.has(anchor.kind) && kinds.add(anchor.kind).size === 2) seen = new Set(names)
    if (seen) {
      if (seen.has(anchor.name)) continue
      seen.add(anchor.name)
    }
    let result
    infos.length = 0
    try {
      result = build(anchor.scheme, anchor.name, anchor.base, view, config, stored, infos)
    } catch (error) {
      if (!(error instanceof SafetensorsError)) throw error
      result = error
      problems.push(error)
    }
    names.push(anchor.name)
    results.push(result)
    if (result instanceof SafetensorsError) continue
    entries.push(result)
    for (const { dtype, shape } of infos) {
      const t = (partTotals[dtype] ??= { elements: 0, tensors: 0 })
      t.elements += elementCount(shape)
      t.tensors++
    }
  }
  /** @type {Map<string, QuantizedWeight | SafetensorsError> | null} */
  let byName = null
  /** @type {Set<string> | null} */
  let partNames = null
  return {
    entries,
    problems,
    // Only FP8 block weights: their two parts are `X.weight` and `X.weight_scale_inv` for a
    // distinct X each, so no stored tensor is a part twice and the parts' sizes add up.
    partTotals: kinds.size === 1 && kinds.has(FP8_KIND) ? partTotals : null,
    get byName() {
      if (!byName) {
        byName = new Map()
        for (let i = 0; i < names.length; i++) byName.set(names[i], results[i])
      }
      return byName
    },
    get partNames() {
      if (!partNames) {
        partNames = new Set()
        for (const e of entries) for (const part of Object.values(e.parts)) partNames.add(part)
      }
      return partNames
    },
  }
}

/**
 * Parameters: a quantized weight counts its logical elements once (byScheme), its parts none;
 * other tensors by dtype. Problems do not throw: an incomplete weight counts as plain tensors.
 * @param {TensorView} view @param {Detection} found
 */
export function countParameters(view, found) {
  /** @type {Record<string, number>} */
  const byDtype = {}
  /** @type {Record<string, number>} */
  const tensors = {}
  /** @type {Record<string, number>} */
  const byScheme = {}
  let total = 0
  /** @param {string} dtype @param {number} n */
  const stored = (dtype, n) => {
    byDtype[dtype] = (byDtype[dtype] ?? 0) + n
    tensors[dtype] = (tensors[dtype] ?? 0) + 1
    total += n
  }
  // With the parts' sizes known, every tensor is counted and the parts taken off after: no
  // lookup of each name among the parts.
  const totals = found.partTotals
  const skip = totals || found.entries.length === 0 ? () => false : (/** @type {string} */ name) => found.partNames.has(name)
  if (view.eachStored) {
    view.eachStored(skip, stored)
  } else {
    for (const name of view.names) {
      if (skip(name)) continue
      const { dtype, shape } = /** @type {PartInfo} */ (view.get(name))
      stored(dtype, elementCount(shape))
    }
  }
  for (const [dtype, t] of Object.entries(totals ?? {})) {
    byDtype[dtype] -= t.elements
    total -= t.elements
    if ((tensors[dtype] -= t.tensors) === 0) delete byDtype[dtype]
  }
  for (const e of found.entries) {
    const n = elementCount(e.shape)
    byScheme[e.scheme] = (byScheme[e.scheme] ?? 0) + n
    total += n
  }
  return { total, byDtype, byScheme }
}

/**
 * The tensor that marks a quantized weight, if `stored` is one: its scheme, logical name, the
 * prefix its parts share, and its kind (the name ending that marked it).
 * @param {string} stored @param {TensorView} view
 * @returns {{ scheme: string, name: string, base: string, kind: string } | null}
 */
function anchorOf(stored, view) {
  /** @param {string} suffix */
  const cut = (suffix) => stored.slice(0, stored.length - suffix.length)
  if (stored.endsWith(FP8_KIND)) return { scheme: 'fp8-block', name: cut('_scale_inv'), base: cut(FP8_KIND), kind: FP8_KIND }
  if (stored.endsWith('_blocks') && isBlocks(/** @type {PartInfo} */ (view.get(stored))))
    return { scheme: 'mxfp4', name: cut('_blocks'), base: cut('_blocks'), kind: '_blocks' }
  if (stored.endsWith('.weight_packed')) {
    const base = cut('.weight_packed')
    return { scheme: view.get(stored)?.dtype === 'U8' ? 'nvfp4' : 'ct-pack', name: `${base}.weight`, base, kind: '.weight_packed' }
  }
  if (stored.endsWith('.weight_scale_2')) {
    const base = cut('.weight_scale_2')
    if (view.get(`${base}.weight`)?.dtype === 'U8') return { scheme: 'nvfp4-modelopt', name: `${base}.weight`, base, kind: '.weight_scale_2' }
  }
  if (stored.endsWith('.weight_scale')) {
    // A scaled FP8 or int8 weight: `X.weight` F8_E4M3 or I8 beside it (ModelOpt's NVFP4 has a
    // U8 weight there, compressed-tensors' packs no `X.weight` at all).
    const base = cut('.weight_scale')
    const dtype = view.get(`${base}.weight`)?.dtype
    if (dtype === 'F8_E4M3' || dtype === 'I8') return { scheme: dtype === 'I8' ? 'int8' : 'fp8', name: `${base}.weight`, base, kind: '.weight_scale' }
  }
  if (stored.endsWith('.qweight')) return { scheme: 'gptq-or-awq', name: `${cut('.qweight')}.weight`, base: cut('.qweight'), kind: '.qweight' }
  const bnb = BNB_STATE.exec(stored)
  if (bnb) return { scheme: `bnb-${bnb[1]}`, name: stored.slice(0, bnb.index), base: stored.slice(0, bnb.index), kind: bnb[0] }
  return null
}

/** @param {PartInfo} info MXFP4 blocks: U8 [..., groups, 16] */
const isBlocks = (info) => info.dtype === 'U8' && info.shape.length >= 2 && Number(info.shape.at(-1)) === 16

/** @param {string} weight @param {string} message @param {string} [code] */
const fail = (weight, message, code = 'QuantPartInvalid') => new SafetensorsError(code, message, { tensor: weight })

/**
 * A part's info, or QuantPartMissing.
 * @param {TensorView} view @param {string} weight @param {string} role @param {string} stored @param {string} scheme
 */
function need(view, weight, role, stored, scheme) {
  const info = view.get(stored)
  if (!info) {
    throw fail(weight, `${scheme} weight ${JSON.stringify(weight)} has no ${role} part: expected a tensor named ` +
      `${JSON.stringify(stored)} (a shard missing from the index, or a checkpoint saved without it)`, 'QuantPartMissing')
  }
  return info
}

/**
 * @param {string} weight @param {string} role @param {string} stored @param {PartInfo} info
 * @param {string[]} dtypes @param {number} [rank]
 */
function expect(weight, role, stored, info, dtypes, rank) {
  if (!dtypes.includes(info.dtype)) {
    throw fail(weight, `the ${role} part ${JSON.stringify(stored)} of ${JSON.stringify(weight)} is ${info.dtype}; ` +
      `expected ${dtypes.join(' or ')}`)
  }
  if (rank !== undefined && info.shape.length !== rank) {
    throw fail(weight, `the ${role} part ${JSON.stringify(stored)} of ${JSON.stringify(weight)} has shape ` +
      `[${info.shape.join(', ')}]; expected ${rank} dimensions`)
  }
}

/** @param {string} weight @param {string} role @param {string} stored @param {any[]} got @param {number[]} want @param {string} why */
function sameShape(weight, role, stored, got, want, why) {
  if (got.length !== want.length || got.some((d, i) => Number(d) !== want[i])) {
    throw fail(weight, `the ${role} part ${JSON.stringify(stored)} of ${JSON.stringify(weight)} has shape ` +
      `[${got.join(', ')}]; ${why} it should be [${want.join(', ')}]`)
  }
}

/** @param {string} weight @param {string} message */
const mismatch = (weight, message) => fail(weight, `${message}: pass the quantization_config that was saved with ` +
  'these weights, or none', 'QuantConfigMismatch')

const SCALE_DTYPES = ['F32', 'F16', 'BF16']
const FP8_DTYPES = ['F8_E4M3']
const ceilDiv = (/** @type {number} */ a, /** @type {number} */ b) => Math.ceil(a / b)

/**
 * The group size for `length` values stored as `groups` groups: the config's, else length /
 * groups when exact, else the one power of two that gives that many groups.
 * @param {number} length @param {number} groups @param {number | undefined} configured
 * @param {string} weight @param {string} what
 */
function groupSize(length, groups, configured, weight, what) {
  if (configured !== undefined && configured !== null && configured > 0) {
    if (ceilDiv(length, configured) !== groups) {
      throw mismatch(weight, `the config's group size ${configured} gives ${ceilDiv(length, configured)} groups ` +
        `over ${length} ${what}, the scales hold ${groups}`)
    }
    return configured
  }
  if (configured === -1 && groups !== 1)
    throw mismatch(weight, `the config says one group (group_size -1), the scales hold ${groups}`)
  if (groups > 0 && length % groups === 0) return length / groups
  const fits = []
  for (let g = 8; g <= length; g *= 2) if (ceilDiv(length, g) === groups) fits.push(g)
  if (fits.length === 1) return fits[0]
  throw fail(weight, `${groups} scale groups over ${length} ${what} do not give one group size: pass the ` +
    'model\'s quantization_config (its group_size) with the quantization option')
}

const DEFAULT_BLOCK = Object.freeze([128, 128])

/**
 * An FP8 block weight: `X.weight` (F8_E4M3, 2-D) and its scales `X.weight_scale_inv`, one per
 * block. Written without the closures and arrays of the other schemes: a checkpoint holds
 * hundreds of thousands of these, and their garbage was most of detection's time.
 * @param {string} weight @param {string} anchor the scales' name
 * @param {TensorView} view @param {Record<string, any> | null} config
 * @param {PartInfo[]} infos given the infos of the two parts (for partTotals)
 * @returns {QuantizedWeight}
 */
function fp8Block(weight, anchor, view, config, infos) {
  const scheme = 'fp8-block'
  const method = config?.quant_method
  if (method && method !== 'fp8') {
    throw mismatch(weight, `the tensors of ${JSON.stringify(weight)} are ${scheme}, the config's quant_method is ` +
      `${JSON.stringify(method)}`)
  }
  // The names themselves, not equal strings made anew: at 500,000 names each new string's
  // flattening and hashing in the lookups below costs as much as the rest of the work.
  const parts = { weight, scaleInv: anchor }
  const w = need(view, weight, 'weight', weight, scheme)
  const s = need(view, weight, 'scale_inv', anchor, scheme)
  expect(weight, 'weight', weight, w, FP8_DTYPES, 2)
  expect(weight, 'scale_inv', anchor, s, SCALE_DTYPES, 2)
  const out = Number(w.shape[0])
  const inF = Number(w.shape[1])
  const block = config?.weight_block_size ?? DEFAULT_BLOCK
  if (block !== DEFAULT_BLOCK && (!Array.isArray(block) || block.length !== 2 || !block.every((b) => Number.isInteger(b) && b > 0)))
    throw mismatch(weight, `weight_block_size ${JSON.stringify(block)} is not two positive integers`)
  const rows = ceilDiv(out, block[0])
  const cols = ceilDiv(inF, block[1])
  if (Number(s.shape[0]) !== rows || Number(s.shape[1]) !== cols) {
    const want = [rows, cols]
    if (block !== DEFAULT_BLOCK) {
      throw mismatch(weight, `weight_block_size [${block}] needs scales [${want}] for a [${out}, ${inF}] weight, ` +
        `${JSON.stringify(anchor)} is [${s.shape.join(', ')}]`)
    }
    sameShape(weight, 'scale_inv', anchor, s.shape, want, `with ${block[0]}x${block[1]} blocks (the default; ` +
      'a config with weight_block_size says otherwise)')
  }
  infos.push(w, s)
  return { name: weight, scheme, shape: [out, inF], parts, details: { block: [block[0], block[1]] } }
}

/**
 * @param {string} scheme from anchorOf @param {string} weight @param {string} base
 * @param {TensorView} view @param {Record<string, any> | null} config
 * @param {string} anchor the stored name anchorOf was given
 * @param {PartInfo[]} infos given the infos of an FP8 block weight's two parts (for partTotals)
 * @returns {QuantizedWeight}
 */
function build(scheme, weight, base, view, config, anchor, infos) {
  if (scheme === 'fp8-block') return fp8Block(weight, anchor, view, config, infos)
  const method = config?.quant_method
  /** @param {string[]} methods */
  const checkMethod = (...methods) => {
    if (method && !methods.includes(method)) {
      throw mismatch(weight, `the tensors of ${JSON.stringify(weight)} are ${scheme === 'gptq-or-awq' ? 'GPTQ/AWQ' : scheme}, ` +
        `the config's quant_method is ${JSON.stringify(method)}`)
    }
  }
  switch (scheme) {
    case 'mxfp4': {
      checkMethod('mxfp4')
      const parts = { blocks: `${base}_blocks`, scales: `${base}_scales` }
      const b = /** @type {PartInfo} */ (view.get(parts.blocks))
      const s = need(view, weight, 'scales', parts.scales, scheme)
      expect(weight, 'scales', parts.scales, s, ['U8'])
      const lead = b.shape.slice(0, -1).map(Number)
      sameShape(weight, 'scales', parts.scales, s.shape, lead, 'one scale per 32-value group:')
      return { name: weight, scheme, shape: [...lead.slice(0, -1), lead[lead.length - 1] * 32], parts, details: { group: 32 } }
    }
    case 'nvfp4':
    case 'nvfp4-modelopt': {
      const ct = scheme === 'nvfp4'
      checkMethod(ct ? 'compressed-tensors' : 'modelopt')
      const scaleRole = ct ? 'globalScale' : 'scale2'
      /** @type {Record<string, string>} */
      const parts = { packed: `${base}.${ct ? 'weight_packed' : 'weight'}`, scale: `${base}.weight_scale`,
        [scaleRole]: `${base}.${ct ? 'weight_global_scale' : 'weight_scale_2'}` }
      const p = need(view, weight, 'packed', parts.packed, 'nvfp4')
      expect(weight, 'packed', parts.packed, p, ['U8'], 2)
      const s = need(view, weight, 'scale', parts.scale, 'nvfp4')
      expect(weight, 'scale', parts.scale, s, ['F8_E4M3'], 2)
      const g = need(view, weight, ct ? 'global scale' : 'scale_2', parts[scaleRole], 'nvfp4')
      expect(weight, ct ? 'global scale' : 'scale_2', parts[scaleRole], g, ['F32'])
      if (elementCount(g.shape) !== 1) throw fail(weight, `the ${ct ? 'global scale' : 'scale_2'} part of ${JSON.stringify(weight)} has ${elementCount(g.shape)} values; expected one`)
      const input = ct ? `${base}.input_global_scale` : `${base}.input_scale`
      if (view.get(input)) parts[ct ? 'inputGlobalScale' : 'inputScale'] = input
      const out = Number(p.shape[0])
      const inF = Number(p.shape[1]) * 2
      if (Number(s.shape[0]) !== out) sameShape(weight, 'scale', parts.scale, s.shape, [out, Number(s.shape[1])], 'one row per output row:')
      const configured = ct ? ctWeights(config)?.group_size : config?.group_size ?? config?.quantization?.group_size
      const group = groupSize(inF, Number(s.shape[1]), configured, weight, 'input columns')
      if (ct) checkBits(config, weight, 4)
      return { name: weight, scheme: 'nvfp4', shape: [out, inF], parts, details: { format: ct ? 'compressed-tensors' : 'modelopt', group } }
    }
    case 'gptq-or-awq':
      return gptqOrAwq(weight, base, view, config, method)
    case 'fp8':
    case 'int8':
      return scaled(scheme, weight, base, view, config)
    case 'ct-pack': {
      checkMethod('compressed-tensors')
      const parts = { packed: `${base}.weight_packed`, scale: `${base}.weight_scale`, shape: `${base}.weight_shape` }
      const p = /** @type {PartInfo} */ (view.get(parts.packed))
      expect(weight, 'packed', parts.packed, p, ['I32'], 2)
      const s = need(view, weight, 'scale', parts.scale, scheme)
      expect(weight, 'scale', parts.scale, s, SCALE_DTYPES, 2)
      need(view, weight, 'shape', parts.shape, scheme)
      const bytes = view.value(parts.shape)
      if (!bytes) throw fail(weight, `the shape part ${JSON.stringify(parts.shape)} is not an I64 tensor of 2 values`)
      const dims = new BigInt64Array(bytes.slice().buffer)
      const out = Number(dims[0])
      const inF = Number(dims[1])
      if (out !== Number(p.shape[0]) || !(inF > 0))
        throw fail(weight, `the shape part ${JSON.stringify(parts.shape)} says [${out}, ${inF}], the packed weight has ${p.shape[0]} rows`)
      const cols = Number(p.shape[1])
      const configured = ctWeights(config)?.num_bits
      const bits = configured ?? [4, 8, 2].find((b) => ceilDiv(inF, Math.floor(32 / b)) === cols)
      if (!bits || ceilDiv(inF, Math.floor(32 / bits)) !== cols) {
        const why = `${cols} words per row for ${inF} values`
        throw bits ? mismatch(weight, `${bits}-bit packing needs ${ceilDiv(inF, Math.floor(32 / bits))} words per row, ${JSON.stringify(parts.packed)} has ${cols}`)
          : fail(weight, `${why}: no bit width from 2 to 8 packs that way`)
      }
      if (Number(s.shape[0]) !== out) sameShape(weight, 'scale', parts.scale, s.shape, [out, Number(s.shape[1])], 'one row per output row:')
      const groups = Number(s.shape[1])
      const group = groupSize(inF, groups, ctWeights(config)?.group_size ?? undefined, weight, 'input columns')
      const zp = view.get(`${base}.weight_zero_point`)
      if (zp) {
        /** @type {Record<string, string>} */ (parts).zeroPoint = `${base}.weight_zero_point`
        expect(weight, 'zero point', `${base}.weight_zero_point`, zp, ['I32'], 2)
        sameShape(weight, 'zero point', `${base}.weight_zero_point`, zp.shape, [ceilDiv(out, Math.floor(32 / bits)), groups],
          `packed along the output rows, ${Math.floor(32 / bits)} per word:`)
      }
      if (view.get(`${base}.weight_g_idx`)) {
        throw fail(weight, `${JSON.stringify(weight)} has a weight_g_idx (activation ordering); this library does not ` +
          'decode compressed-tensors packs with one yet', 'UnsupportedQuantization')
      }
      if (bits < 2 || bits > 8) throw fail(weight, `${bits}-bit packs are not decoded (2 to 8 are)`, 'UnsupportedQuantization')
      return { name: weight, scheme, shape: [out, inF], parts, details: { bits, group, symmetric: !zp } }
    }
    default:
      return bnb(scheme, weight, view, config, checkMethod)
  }
}

/** @param {Record<string, any> | null} config the weights' args of a compressed-tensors config */
function ctWeights(config) {
  const groups = config?.config_groups
  if (!groups || typeof groups !== 'object') return undefined
  return /** @type {any} */ (Object.values(groups)[0])?.weights
}

/**
 * A per-tensor, per-channel or per-group scaled weight: `X.weight` F8_E4M3 (fp8) or I8 (int8)
 * [out, in] with `X.weight_scale` [] or [1] (tensor), [out, 1] or [out] (channel), or [out, G]
 * (group), and for int8 an optional `X.weight_zero_point` I8 of the scale's shape. Producers:
 * compressed-tensors float-quantized and int-quantized, transformers' fbgemm_fp8, ModelOpt FP8,
 * AutoFP8 (quant_method fp8 without weight_block_size). The activation scales beside it are parts.
 * @param {string} scheme fp8 | int8 @param {string} weight @param {string} base
 * @param {TensorView} view @param {Record<string, any> | null} config
 * @returns {QuantizedWeight}
 */
function scaled(scheme, weight, base, view, config) {
  const fp8 = scheme === 'fp8'
  const args = scaledConfig(scheme, weight, config)
  /** @type {Record<string, string>} */
  const parts = { weight, scale: `${base}.weight_scale` }
  const w = /** @type {PartInfo} */ (view.get(weight))
  expect(weight, 'weight', weight, w, [fp8 ? 'F8_E4M3' : 'I8'], 2)
  const s = /** @type {PartInfo} */ (view.get(parts.scale))
  expect(weight, 'scale', parts.scale, s, SCALE_DTYPES)
  const out = Number(w.shape[0])
  const inF = Number(w.shape[1])
  const dims = s.shape.map(Number)
  let strategy
  if (dims.length === 0 || (dims.length === 1 && dims[0] === 1 && out !== 1) || (dims.length === 2 && dims[0] === 1 && dims[1] === 1 && out !== 1)) {
    strategy = 'tensor'
  } else if ((dims.length === 1 && dims[0] === out) || (dims.length === 2 && dims[0] === out && dims[1] === 1)) {
    strategy = 'channel'
  } else if (dims.length === 2 && dims[0] === out) {
    strategy = 'group'
  } else {
    throw fail(weight, `the scale part ${JSON.stringify(parts.scale)} of ${JSON.stringify(weight)} has shape [${s.shape.join(', ')}]; ` +
      `for a [${out}, ${inF}] weight it should be [] or [1] (per tensor), [${out}, 1] (per channel) or [${out}, groups]`)
  }
  /** @type {Record<string, any>} */
  const details = { strategy }
  if (strategy === 'group') {
    details.group = groupSize(inF, dims[1], args?.group_size ?? undefined, weight, 'input columns')
  }
  const configured = args?.strategy
  if (configured && configured !== strategy && !(out === 1 && configured === 'channel' && strategy === 'tensor') &&
    !(configured === 'group' && strategy === 'channel' && args?.group_size >= inF)) {
    throw mismatch(weight, `the config's strategy is ${JSON.stringify(configured)}, the scale ${JSON.stringify(parts.scale)} of ` +
      `shape [${s.shape.join(', ')}] is per ${strategy}`)
  }
  const zp = view.get(`${base}.weight_zero_point`)
  if (zp) {
    parts.zeroPoint = `${base}.weight_zero_point`
    expect(weight, 'zero point', parts.zeroPoint, zp, [fp8 ? 'F8_E4M3' : 'I8'])
    sameShape(weight, 'zero point', parts.zeroPoint, zp.shape, dims, 'one per scale:')
  }
  if (!fp8) details.symmetric = !zp
  for (const [role, suffix] of [['inputScale', 'input_scale'], ['inputZeroPoint', 'input_zero_point'], ['inputScaleUb', 'input_scale_ub']]) {
    if (view.get(`${base}.${suffix}`)) parts[role] = `${base}.${suffix}`
  }
  return { name: weight, scheme, shape: [out, inF], parts, details }
}

/**
 * The config's word on an fp8 or int8 weight: its quant_method (and format, algorithm, bits,
 * type) must allow the scheme; returns compressed-tensors' weight args that do, if any.
 * @param {string} scheme @param {string} weight @param {Record<string, any> | null} config
 * @returns {Record<string, any> | undefined}
 */
function scaledConfig(scheme, weight, config) {
  const method = config?.quant_method
  if (!method) return undefined
  const fp8 = scheme === 'fp8'
  const methods = fp8 ? ['compressed-tensors', 'fbgemm_fp8', 'modelopt', 'fp8'] : ['compressed-tensors']
  const disagree = (/** @type {string} */ what) => mismatch(weight, `the tensors of ${JSON.stringify(weight)} are ${scheme} ` +
    `(${fp8 ? 'F8_E4M3' : 'I8'} with a weight_scale), the config's ${what}`)
  if (!methods.includes(method)) throw disagree(`quant_method is ${JSON.stringify(method)}`)
  if (method === 'fp8' && config?.weight_block_size) throw disagree(`weight_block_size ${JSON.stringify(config.weight_block_size)} says FP8 blocks (weight_scale_inv)`)
  if (method === 'modelopt') {
    const algo = config?.quant_algo ?? config?.quantization?.quant_algo
    if (algo !== undefined && algo !== null && !/^FP8/i.test(String(algo))) throw disagree(`quant_algo is ${JSON.stringify(algo)}`)
  }
  if (method !== 'compressed-tensors') return undefined
  const format = config?.format
  if (format && format !== (fp8 ? 'float-quantized' : 'int-quantized') && format !== 'naive-quantized' && format !== 'mixed-precision')
    throw disagree(`format is ${JSON.stringify(format)}`)
  const groups = config?.config_groups
  if (!groups || typeof groups !== 'object') return undefined
  const all = Object.values(groups).map((g) => /** @type {any} */ (g)?.weights).filter((a) => a && typeof a === 'object')
  if (all.length === 0) return undefined
  const type = fp8 ? 'float' : 'int'
  const fits = all.filter((a) => (a.num_bits ?? 8) === 8 && (a.type ?? type) === type)
  if (fits.length === 0) {
    throw disagree(`config_groups quantize weights as ${all.map((a) => `${a.num_bits}-bit ${a.type}`).join(', ')}, not 8-bit ${type}`)
  }
  // Several groups that fit (a mixed-precision config): which one is this weight's is the
  // targets' business, so their strategy and group size are not checked.
  return fits.length === 1 ? fits[0] : undefined
}

/** @param {Record<string, any> | null} config @param {string} weight @param {number} bits */
function checkBits(config, weight, bits) {
  const configured = ctWeights(config)?.num_bits
  if (configured !== undefined && configured !== bits) throw mismatch(weight, `the config says ${configured} bits, the tensors hold ${bits}`)
}

/**
 * GPTQ stores qweight [in*bits/32, out] with scales [G, out]; AWQ qweight [in, out/8] with
 * scales [G, out]: the column counts tell them apart.
 * @param {string} weight @param {string} base @param {TensorView} view
 * @param {Record<string, any> | null} config @param {string | undefined} method
 * @returns {QuantizedWeight}
 */
function gptqOrAwq(weight, base, view, config, method) {
  const parts = { qweight: `${base}.qweight`, qzeros: `${base}.qzeros`, scales: `${base}.scales` }
  const q = /** @type {PartInfo} */ (view.get(parts.qweight))
  expect(weight, 'qweight', parts.qweight, q, ['I32'], 2)
  const z = need(view, weight, 'qzeros', parts.qzeros, 'GPTQ/AWQ')
  const s = need(view, weight, 'scales', parts.scales, 'GPTQ/AWQ')
  expect(weight, 'qzeros', parts.qzeros, z, ['I32'], 2)
  expect(weight, 'scales', parts.scales, s, SCALE_DTYPES, 2)
  const [rows, cols] = q.shape.map(Number)
  const [groups, out] = s.shape.map(Number)
  const awq = cols !== out && cols * 8 === out
  if (method && method !== (awq ? 'awq' : 'gptq'))
    throw mismatch(weight, `the tensors of ${JSON.stringify(weight)} are laid out as ${awq ? 'AWQ' : 'GPTQ'}, the config's quant_method is ${JSON.stringify(method)}`)
  if (awq) {
    if (config?.bits !== undefined && config.bits !== 4) throw fail(weight, `AWQ with ${config.bits} bits is not decoded (4 is)`, 'UnsupportedQuantization')
    if (config?.version && String(config.version).toLowerCase() !== 'gemm')
      throw fail(weight, `AWQ ${config.version} packing is not decoded (GEMM is)`, 'UnsupportedQuantization')
    const inF = rows
    sameShape(weight, 'qzeros', parts.qzeros, z.shape, [groups, cols], 'eight 4-bit zeros per word:')
    const group = groupSize(inF, groups, config?.group_size, weight, 'input rows')
    return { name: weight, scheme: 'awq', shape: [out, inF], parts, details: { bits: 4, group } }
  }
  if (cols !== out) {
    throw fail(weight, `qweight ${JSON.stringify(parts.qweight)} has ${cols} columns and scales ${JSON.stringify(parts.scales)} ` +
      `${out}: neither GPTQ (equal) nor AWQ (8 outputs per column)`)
  }
  const gIdx = view.get(`${base}.g_idx`)
  let inF
  let bits
  if (gIdx) {
    /** @type {Record<string, string>} */ (parts).gIdx = `${base}.g_idx`
    expect(weight, 'g_idx', `${base}.g_idx`, gIdx, ['I32'], 1)
    inF = Number(gIdx.shape[0])
    bits = (32 * rows) / inF
  } else {
    bits = config?.bits ?? (32 * Number(z.shape[1])) / out
    inF = (32 * rows) / bits
  }
  if (config?.bits !== undefined && config.bits !== bits)
    throw mismatch(weight, `the config says ${config.bits} bits, qweight ${JSON.stringify(parts.qweight)} holds ${bits} per value`)
  if (![2, 3, 4, 8].includes(bits)) {
    throw fail(weight, `qweight ${JSON.stringify(parts.qweight)} holds ${bits} bits per value; GPTQ packs 2, 3, 4 or 8`,
      Number.isInteger(bits) ? 'UnsupportedQuantization' : 'QuantPartInvalid')
  }
  sameShape(weight, 'qzeros', parts.qzeros, z.shape, [groups, ceilDiv(out * bits, 32)], `${bits}-bit zeros packed along the outputs:`)
  const format = config?.checkpoint_format === 'gptq_v2' ? 'gptq_v2' : 'gptq'
  const group = gIdx && !(config?.group_size > 0) ? ceilDiv(inF, groups) : groupSize(inF, groups, config?.group_size, weight, 'input rows')
  return { name: weight, scheme: 'gptq', shape: [out, inF], parts, details: { bits, group, actOrder: config?.desc_act ?? null, format } }
}

/**
 * bitsandbytes 4-bit: the logical shape is in the quant state's JSON.
 * @param {string} scheme bnb-nf4 | bnb-fp4 @param {string} weight @param {TensorView} view
 * @param {Record<string, any> | null} config @param {(...m: string[]) => void} checkMethod
 * @returns {QuantizedWeight}
 */
function bnb(scheme, weight, view, config, checkMethod) {
  checkMethod('bitsandbytes')
  const type = scheme.slice(4)
  const parts = { weight, absmax: `${weight}.absmax`, quantMap: `${weight}.quant_map`, quantState: `${weight}.quant_state.bitsandbytes__${type}` }
  const configured = config?.bnb_4bit_quant_type
  if (configured && configured !== type) throw mismatch(weight, `the config says ${configured}, the quant state is ${type}`)
  const w = need(view, weight, 'weight', weight, scheme)
  expect(weight, 'weight', weight, w, ['U8'])
  const a = need(view, weight, 'absmax', parts.absmax, scheme)
  const m = need(view, weight, 'quant_map', parts.quantMap, scheme)
  expect(weight, 'quant_map', parts.quantMap, m, ['F32'])
  sameShape(weight, 'quant_map', parts.quantMap, m.shape, [16], 'one value per 4-bit code:')
  const bytes = view.value(parts.quantState)
  /** @type {any} */
  let state
  try {
    state = bytes && JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes))
  } catch (error) {
    state = /** @type {Error} */ (error).message
  }
  /** @param {string} why */
  const invalid = (why) => fail(weight, `the quant state ${JSON.stringify(parts.quantState)} of ${JSON.stringify(weight)} ${why}`, 'QuantStateInvalid')
  if (!state || typeof state !== 'object') throw invalid(`is not a JSON object (${typeof state === 'string' ? state : 'empty'})`)
  const shape = state.shape
  if (!Array.isArray(shape) || !shape.every((d) => Number.isInteger(d) && d >= 0)) throw invalid(`has no shape of whole numbers (got ${JSON.stringify(shape)})`)
  if (state.quant_type !== undefined && state.quant_type !== type) throw invalid(`says quant_type ${JSON.stringify(state.quant_type)} under a ${type} name`)
  const blocksize = state.blocksize
  if (!Number.isInteger(blocksize) || blocksize <= 0) throw invalid(`has blocksize ${JSON.stringify(blocksize)}`)
  const n = elementCount(shape)
  if (elementCount(w.shape) !== ceilDiv(n, 2)) invalidShape(invalid, `shape [${shape}] holds ${n} values, ${ceilDiv(n, 2)} bytes packed; the weight has ${elementCount(w.shape)}`)
  const blocks = ceilDiv(n, blocksize)
  if (elementCount(a.shape) !== blocks) invalidShape(invalid, `says ${n} values in blocks of ${blocksize}, ${blocks} absmax values; ${JSON.stringify(parts.absmax)} has ${elementCount(a.shape)}`)
  const nestedAbsmax = `${weight}.nested_absmax`
  const nested = a.dtype === 'U8'
  const details = { blocksize, nested, quantType: type }
  if (nested) {
    const na = need(view, weight, 'nested_absmax', nestedAbsmax, scheme)
    const nm = need(view, weight, 'nested_quant_map', `${weight}.nested_quant_map`, scheme)
    expect(weight, 'nested_absmax', nestedAbsmax, na, ['F32'])
    expect(weight, 'nested_quant_map', `${weight}.nested_quant_map`, nm, ['F32'])
    sameShape(weight, 'nested_quant_map', `${weight}.nested_quant_map`, nm.shape, [256], 'one value per 8-bit code:')
    const nb = state.nested_blocksize
    if (!Number.isInteger(nb) || nb <= 0) throw invalid(`has nested_blocksize ${JSON.stringify(nb)}`)
    if (typeof state.nested_offset !== 'number') throw invalid(`has no numeric nested_offset (got ${JSON.stringify(state.nested_offset)})`)
    if (elementCount(na.shape) !== ceilDiv(blocks, nb))
      invalidShape(invalid, `needs ${ceilDiv(blocks, nb)} nested absmax values for ${blocks} blocks of ${nb}; ${JSON.stringify(nestedAbsmax)} has ${elementCount(na.shape)}`)
    Object.assign(parts, { nestedAbsmax, nestedQuantMap: `${weight}.nested_quant_map` })
    Object.assign(details, { nestedBlocksize: nb, nestedOffset: state.nested_offset })
  } else {
    expect(weight, 'absmax', parts.absmax, a, ['F32'])
  }
  if (config?.bnb_4bit_use_double_quant !== undefined && Boolean(config.bnb_4bit_use_double_quant) !== nested)
    throw mismatch(weight, `the config says bnb_4bit_use_double_quant ${config.bnb_4bit_use_double_quant}, the absmax is ${nested ? '' : 'not '}nested`)
  return { name: weight, scheme: `bnb-${type}`, shape: shape.slice(), parts, details }
}

/** @param {(why: string) => SafetensorsError} invalid @param {string} why @returns {never} */
function invalidShape(invalid, why) {
  throw invalid(`does not match the tensors: ${why}`)
}
