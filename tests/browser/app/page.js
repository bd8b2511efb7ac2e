/**
 * The unbundled app (page.html imports the package's browser entry, /js/index.js, and calls
 * `run`). `run: 'main'` reads on the page's own thread; `run: 'worker'` starts worker.js as a
 * module worker and hashes what it transfers back.
 */
import { PATHS, digestOf, publish, readEvery, readQuantized, readSlices, readStreamed } from './checks.js'

/**
 * @typedef {import('./checks.js').Open} Open
 * @typedef {import('./worker.js').Sent} Sent
 * @typedef {import('./worker.js').WorkerMessage} WorkerMessage
 */

/**
 * @param {Open} open the package's `open`
 * @param {string} data the data origin (another origin than the page's)
 * @param {string} mode 'main' or 'worker'
 */
export function run(open, data, mode) {
  publish(() => (mode === 'worker' ? inWorker(data) : onPage(open, data)))
}

/** Every way a page reads: URL, slices, a sharded set by its index URL, a Blob; then quantized
 * files, dequantized (the kernels load on the first dequantize()); then the streaming entries
 * (chunks, stats, digest, toFloat32 into an array) on STREAM's file.
 * @param {Open} open @param {string} data */
async function onPage(open, data) {
  const single = await readEvery(open, data + PATHS.single)
  const dtypes = await readEvery(open, data + PATHS.dtypes)
  const slices = await readSlices(open, data + PATHS.slices)
  const sharded = await readEvery(open, data + PATHS.index)
  // A Blob the app made from bytes it fetched itself (plain fetch, no Range).
  const response = await fetch(data + PATHS.blob)
  if (!response.ok) throw new Error(`fetch ${PATHS.blob}: HTTP ${response.status}`)
  const blob = new Blob([await response.arrayBuffer()], { type: 'application/octet-stream' })
  const fromBlob = await readEvery(open, blob)
  const blobSlices = await readSlices(open, blob)
  const quant = await readQuantized(open, data, digestOf)
  const stream = await readStreamed(open, data)
  return { single, dtypes, slices, sharded, blob: fromBlob, blobSlices, blobSize: blob.size, quant, stream }
}

/** Starts worker.js, asks it to read, hashes the arrays it transfers.
 * @param {string} data */
async function inWorker(data) {
  const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' })
  try {
    /** @type {{ result: Extract<WorkerMessage, { kind: 'result' }>, detached: Extract<WorkerMessage, { kind: 'detached' }> }} */
    const got = await new Promise((resolve, reject) => {
      /** @type {any} */
      const messages = {}
      worker.onmessage = (/** @type {MessageEvent<WorkerMessage>} */ event) => {
        const m = event.data
        if (m.kind === 'error') reject(Object.assign(new Error(m.error.message), m.error, { stack: `(in the worker) ${m.error.stack}` }))
        else messages[m.kind] = m
        if (messages.result && messages.detached) resolve(messages)
      }
      worker.onerror = (event) => {
        event.preventDefault()
        reject(new Error(`the worker failed: ${event.message || 'error event without a message (a module that did not load?)'}`))
      }
      worker.onmessageerror = () => reject(new Error('a message from the worker could not be deserialized'))
      worker.postMessage({ data })
    })
    const hash = (/** @type {Sent} */ s) => digestOf(s, s.data).then((d) => ({ ...d, type: s.data.constructor.name, sentType: s.type }))
    /** @type {Record<string, import('./checks.js').QuantRead<Awaited<ReturnType<typeof hash>>>>} */
    const quantFiles = {}
    for (const [fixture, q] of Object.entries(got.result.quant.files)) {
      quantFiles[fixture] = { quantized: q.quantized, parameters: q.parameters, weights: await Promise.all(q.weights.map(hash)), slice: await hash(q.slice) }
    }
    return {
      tensors: await Promise.all(got.result.tensors.map(hash)),
      slices: await Promise.all(got.result.slices.map(hash)),
      float32: await hash(got.result.float32),
      names: got.result.names,
      quant: { files: quantFiles, scripts: got.result.quant.scripts },
      sentByteLengths: got.detached.byteLengths,
      quantSentByteLengths: got.detached.quantByteLengths,
      dataTransfer: got.detached.dataTransfer,
      stream: got.result.stream,
      sharded: got.result.sharded,
    }
  } finally {
    worker.terminate()
  }
}
