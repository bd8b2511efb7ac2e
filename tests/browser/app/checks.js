/**
 * What the test pages do with safetensors-wasm, written as an app would: default options only,
 * no injected fetch. Each entry point (page.js, worker.js, bundle-entry.js) imports `open` the
 * way an app does and hands it here; the results are plain data that the test compares with
 * what the Node entry reads from the same bytes (tests/browser/default-path.test.js).
 */

/**
 * @typedef {typeof import('../../../js/index.js').open} Open
 * @typedef {import('../../../js/index.js').Tensor} Tensor
 * @typedef {{ name: string, dtype: string, shape: number[], byteLength: number, sha256: string }} TensorDigest
 * @typedef {{ names: string[], tensors: TensorDigest[], parameters: ParameterCount, byShard: string[][] | null }} FileDigest
 *   byShard: a sharded set's names shard by shard (namesIn), null for one file
 * @typedef {{ total: number, byDtype: Record<string, number>, byScheme: Record<string, number> }} ParameterCount
 * @typedef {{ name: string, code: string | null, message: string, stack: string }} ErrorReport
 * @typedef {import('../../../js/index.js').QuantizedWeight} QuantizedWeight
 * @typedef {[number | null, number | null]} RowSlice
 * @typedef {{ path: string, slice: readonly [string, RowSlice] }} QuantFile
 * @typedef {{ pieces: [number, number][], types: string[], byteLength: number, sha256: string }} ChunksRead
 *   f.chunks(): each piece's [offset, byteLength], its view's class, and the concatenation's length and SHA-256
 * @typedef {{ name: string, same: boolean, length: number, sha256: string }} IntoRead
 *   t.toFloat32({ into }): whether `into` itself came back, and its values' SHA-256
 * @typedef {{ chunks: ChunksRead, slice: ChunksRead, stats: Record<string, import('../../../js/index.js').Stats>,
 *   fileDigest: string, tensorDigest: string, into: IntoRead[] }} StreamRead
 */

/**
 * The files on the data origin, relative to its base URL. The sample model is served at three
 * paths, one per kind of read, so that each reaches the network: Chromium's HTTP cache keeps
 * ranges it has seen and would answer a second open of the same URL itself.
 */
export const PATHS = Object.freeze({
  single: '/single/model.safetensors',   // every tensor
  slices: '/slices/model.safetensors',   // SLICES
  blob: '/blob/model.safetensors',       // fetched whole by the app, opened as a Blob
  dtypes: '/dtypes/all.safetensors',     // a [4, 8] tensor of every dtype
  index: '/sharded/model.safetensors.index.json',
})

/**
 * Slices of the sample model (tests/fixtures/make-sample.js): one inside the first response's
 * kept prefix, one across its end, the others past it (so they are ranged reads of their own).
 * @type {ReadonlyArray<readonly [string, string]>}
 */
export const SLICES = Object.freeze([
  ['model.embed_tokens.weight', '1:3'],
  ['model.layers.2.mlp.up_proj.weight', ':, 2:10'],
  ['model.layers.3.mlp.down_proj.weight', '-2:, 100:'],
  ['lm_head.weight', '250:520'],
  ['model.position_ids', '0, 5:9'],
])

/**
 * Quantized checkpoints (tests/js/quant-fixtures.js, by fixture name), each at a path of its own
 * on the data origin: every scheme, so that every kernel runs in the browser (fp8-block, mxfp4
 * and nvfp4 are the SIMD ones). Each is opened with default options (no `quantization`: what
 * names, dtypes and shapes settle), every weight is dequantized whole, and one by `slice` (rows
 * [start, stop) of the leading dimension; across scale blocks, groups or act-order groups).
 * @type {Readonly<Record<string, QuantFile>>}
 */
export const QUANT = Object.freeze({
  fp8: { path: '/quant/fp8/model.safetensors', slice: ['model.layers.0.mlp.down_proj.weight', [100, 290]] },
  mxfp4: { path: '/quant/mxfp4/model.safetensors', slice: ['model.layers.0.mlp.experts.gate_up_proj', [1, 3]] },
  'nvfp4-ct': { path: '/quant/nvfp4-ct/model.safetensors', slice: ['model.layers.0.mlp.gate_proj.weight', [5, -3]] },
  'nvfp4-modelopt': { path: '/quant/nvfp4-modelopt/model.safetensors', slice: ['model.layers.0.mlp.down_proj.weight', [null, 17]] },
  gptq4: { path: '/quant/gptq4/model.safetensors', slice: ['model.layers.0.self_attn.q_proj.weight', [10, 90]] },
  'awq-odd': { path: '/quant/awq-odd/model.safetensors', slice: ['model.layers.0.mlp.down_proj.weight', [3, 37]] },
  'bnb-nf4-nested': { path: '/quant/bnb-nf4-nested/model.safetensors', slice: ['model.layers.0.mlp.up_proj.weight', [33, 290]] },
  'ct-pack': { path: '/quant/ct-pack/model.safetensors', slice: ['model.layers.0.self_attn.o_proj.weight', [1, 43]] },
})

/**
 * The streaming entries (f.chunks, f.stats, f.digest, t.toFloat32({ into })) on a file made for
 * them (default-path.test.js makes it): `chunked`, larger than the default chunk (4 MiB), comes
 * in several pieces; `slice` is a slice of it across many byte ranges; `stats` are summarised by
 * streaming (an F32 tensor over one chunk is read twice: the histogram's pass); `digest` is
 * hashed alone, and the whole file with it; `into` are converted one after the other into the
 * same Float32Array (the same element count). The file is served at two paths, so that the
 * whole file's digest reaches the network (Chromium's HTTP cache would answer it from the ranges
 * the other reads left): `path` for the reads, `digestPath` for f.digest() and f.digest(name).
 */
export const STREAM = Object.freeze({
  path: '/stream/model.safetensors',
  digestPath: '/stream-digest/model.safetensors',
  chunked: 'w.f32',
  slice: /** @type {readonly [string, string]} */ (['w.f32', '3:1001, 7:2050']),
  stats: Object.freeze(['w.f32', 'w.bf16']),
  digest: 'w.bf16',
  into: Object.freeze(['w.bf16', 'w.f16']),
})

/** @param {ArrayBufferView} view @returns {Promise<string>} lowercase hex */
export async function sha256(view) {
  // A copy the digest may read (a view of a SharedArrayBuffer would not do).
  const bytes = new Uint8Array(view.byteLength)
  bytes.set(new Uint8Array(view.buffer, view.byteOffset, view.byteLength))
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('')
}

/** @param {{ name: string, dtype: string, shape: ArrayLike<number | bigint> }} t @param {ArrayBufferView} data */
export async function digestOf(t, data) {
  return { name: t.name, dtype: t.dtype, shape: Array.from(t.shape, Number), byteLength: data.byteLength, sha256: await sha256(data) }
}

/**
 * A sharded set's names shard by shard (namesIn), null for one file.
 * @param {import('../../../js/index.js').SafetensorsFile | import('../../../js/index.js').ShardedFile} f
 */
export function namesByShard(f) {
  return 'namesIn' in f ? f.shards.map((path) => f.namesIn(path)) : null
}

/**
 * Opens `src`, counts its parameters and reads every tensor (one `load` of all names), hashing
 * a copy of each.
 * @param {Open} open @param {Parameters<Open>[0]} src @returns {Promise<FileDigest>}
 */
export async function readEvery(open, src) {
  const f = await open(src)
  try {
    const names = f.names
    const tensors = await f.load(names)
    /** @type {TensorDigest[]} */
    const out = []
    for (const name of names) {
      const t = /** @type {Tensor} */ (tensors.get(name))
      out.push(await digestOf(t, t.copy()))
      t.dispose()
    }
    return { names, tensors: out, parameters: await f.parameterCount(), byShard: namesByShard(f) }
  } finally {
    await f.close()
  }
}

/**
 * Opens `src` and reads each of SLICES, hashing a copy of each.
 * @param {Open} open @param {Parameters<Open>[0]} src @returns {Promise<TensorDigest[]>}
 */
export async function readSlices(open, src) {
  const f = await open(src)
  try {
    /** @type {TensorDigest[]} */
    const out = []
    for (const [name, spec] of SLICES) {
      const t = await f.slice(name, spec)
      out.push(await digestOf(t, t.copy()))
      t.dispose()
    }
    return out
  } finally {
    await f.close()
  }
}

/**
 * f.chunks(name, options) as an app uses it: each piece copied out before the next step (a piece
 * is valid until then), the copies concatenated and hashed.
 * @param {Awaited<ReturnType<Open>>} f @param {string} name @param {{ slice?: string }} [options]
 * @returns {Promise<ChunksRead>}
 */
export async function readChunks(f, name, options) {
  /** @type {Uint8Array[]} */
  const copies = []
  /** @type {[number, number][]} */
  const pieces = []
  /** @type {string[]} */
  const types = []
  for await (const { offset, data } of f.chunks(name, options)) {
    pieces.push([offset, data.byteLength])
    types.push(data.constructor.name)
    copies.push(new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice())
  }
  const all = new Uint8Array(copies.reduce((n, c) => n + c.length, 0))
  let at = 0
  for (const c of copies) {
    all.set(c, at)
    at += c.length
  }
  return { pieces, types, byteLength: all.length, sha256: await sha256(all) }
}

/**
 * Opens STREAM's file on the data origin and uses each streaming entry with default options:
 * f.chunks() of a tensor and of a slice, f.stats() of STREAM.stats, t.toFloat32({ into }) of
 * STREAM.into into one array; then, opened at its other path, f.digest() of the whole file and
 * f.digest() of a tensor.
 * @param {Open} open @param {string} data the data origin @returns {Promise<StreamRead>}
 */
export async function readStreamed(open, data) {
  const f = await open(data + STREAM.path)
  try {
    const chunks = await readChunks(f, STREAM.chunked)
    const slice = await readChunks(f, STREAM.slice[0], { slice: STREAM.slice[1] })
    /** @type {StreamRead['stats']} */
    const stats = {}
    for (const name of STREAM.stats) stats[name] = await f.stats(name)
    /** @type {IntoRead[]} */
    const into = []
    /** @type {Float32Array | null} */
    let array = null
    for (const name of STREAM.into) {
      const t = await f.tensor(name)
      try {
        array ??= new Float32Array(t.elementCount).fill(Number.NaN)
        const out = t.toFloat32({ into: array })
        into.push({ name, same: out === array, length: array.length, sha256: await sha256(array) })
      } finally {
        t.dispose()
      }
    }
    const g = await open(data + STREAM.digestPath)
    try {
      const fileDigest = await g.digest()
      const tensorDigest = await g.digest(STREAM.digest)
      return { chunks, slice, stats, fileDigest, tensorDigest, into }
    } finally {
      await g.close()
    }
  } finally {
    await f.close()
  }
}

/**
 * What one quantized file gives: its `quantized()` list as plain data, its parameterCount(), what
 * `keep` makes of each weight's dequantize() (in the list's order) and of the slice's.
 * @template T
 * @typedef {{ quantized: QuantizedWeight[], parameters: ParameterCount, weights: T[], slice: T }} QuantRead
 */

/**
 * The app origin's resources this realm (page or worker) has loaded so far: the scripts and
 * chunks, by URL (Resource Timing; publish() makes its buffer large enough).
 * @returns {string[]}
 */
export function scriptsLoaded() {
  return performance.getEntriesByType('resource').map((e) => e.name).filter((url) => new URL(url).origin === location.origin)
}

/**
 * Opens each of QUANT on the data origin with default options, lists its quantized weights and
 * dequantizes each (whole, then QUANT's slice), handing every F32 tensor and a copy of its
 * values to `keep`. Also reports the app origin's resources loaded before the first dequantize()
 * and after the last, so the test can see the kernels load on first use and not before.
 * @template T
 * @param {Open} open @param {string} data the data origin
 * @param {(t: Tensor, values: ArrayBufferView) => T | Promise<T>} keep
 * @returns {Promise<{ files: Record<string, QuantRead<T>>, scripts: { beforeDequantize: string[], after: string[] } }>}
 */
export async function readQuantized(open, data, keep) {
  /** @type {Record<string, QuantRead<T>>} */
  const files = {}
  /** @type {string[] | null} */
  let beforeDequantize = null
  for (const [fixture, { path, slice: [sliced, rows] }] of Object.entries(QUANT)) {
    const f = await open(data + path)
    try {
      const list = await f.quantized()
      // Plain data, as the page sends it (the test compares it with the Node entry's, also as JSON).
      const quantized = /** @type {QuantizedWeight[]} */ (JSON.parse(JSON.stringify(list)))
      beforeDequantize ??= scriptsLoaded()
      /** @type {T[]} */
      const weights = []
      for (const { name } of list) {
        const t = await f.dequantize(name)
        weights.push(await keep(t, t.copy()))
        t.dispose()
      }
      const t = await f.dequantize(sliced, { slice: [rows[0], rows[1]] })
      const slice = await keep(t, t.copy())
      t.dispose()
      files[fixture] = { quantized, parameters: await f.parameterCount(), weights, slice }
    } finally {
      await f.close()
    }
  }
  return { files, scripts: { beforeDequantize: beforeDequantize ?? [], after: scriptsLoaded() } }
}

/** @param {unknown} error @returns {ErrorReport} */
export function errorReport(error) {
  const e = /** @type {{ name?: unknown, code?: unknown, message?: unknown, stack?: unknown }} */ (error ?? {})
  return {
    name: String(e.name ?? 'Error'), code: typeof e.code === 'string' ? e.code : null,
    message: String(e.message ?? error), stack: String(e.stack ?? ''),
  }
}

/**
 * Publishes what `work` gives as `results` on the page's global object, where the test waits
 * for it: `{ ok: true, ...value }` or `{ ok: false, error }`.
 * @param {() => Promise<Record<string, unknown>>} work
 */
export function publish(work) {
  performance.setResourceTimingBufferSize(100_000)  // scriptsLoaded() sees every script
  const g = /** @type {{ results?: unknown }} */ (/** @type {unknown} */ (globalThis))
  work().then((value) => { g.results = { ok: true, ...value } }, (error) => { g.results = { ok: false, error: errorReport(error) } })
}
