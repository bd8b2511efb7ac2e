/**
 * A module worker that uses the package's browser entry as an app's worker does: opens the file
 * and slices on the data origin with default options, reads a sharded set by its index URL (the
 * index parser's module loads in the worker) and sends its digest, dequantizes the quantized files (QUANT),
 * and transfers copies of the tensors to the page (`t.data` itself is a view of wasm memory,
 * whose buffer cannot be transferred); then uses the streaming entries (chunks, stats, digest,
 * toFloat32 into an array) on STREAM's file and sends what they gave (hashes, statistics).
 */
import { open } from '../../../js/index.js'
import { PATHS, SLICES, errorReport, readEvery, readQuantized, readStreamed } from './checks.js'

/**
 * @typedef {{ name: string, dtype: string, shape: number[], type: string, data: ArrayBufferView }} Sent
 * @typedef {{ files: Record<string, import('./checks.js').QuantRead<Sent>>,
 *   scripts: { beforeDequantize: string[], after: string[] } }} QuantResult
 * @typedef {{ kind: 'result', names: string[], tensors: Sent[], slices: Sent[], float32: Sent, quant: QuantResult,
 *     sharded: Awaited<ReturnType<typeof readEvery>>,
 *     stream: import('./checks.js').StreamRead }
 *   | { kind: 'detached', byteLengths: number[], quantByteLengths: number[], dataTransfer: string }
 *   | { kind: 'error', error: import('./checks.js').ErrorReport }} WorkerMessage
 * @typedef {{ postMessage(message: WorkerMessage, transfer?: Transferable[]): void,
 *   onmessage: ((event: MessageEvent<{ data: string }>) => void) | null }} Scope
 */

const scope = /** @type {Scope} */ (/** @type {unknown} */ (self))

/** @param {import('../../../js/index.js').Tensor} t @param {ArrayBufferView} data @returns {Sent} */
const sent = (t, data) => ({ name: t.name, dtype: t.dtype, shape: Array.from(t.shape, Number), type: data.constructor.name, data })

scope.onmessage = async (/** @type {MessageEvent<{ data: string }>} */ event) => {
  try {
    performance.setResourceTimingBufferSize(100_000)  // readQuantized's scriptsLoaded() sees every script
    const f = await open(event.data.data + PATHS.single)
    /** @type {Sent[]} */
    const tensors = []
    const loaded = await f.load(f.names)
    for (const t of loaded.values()) {
      tensors.push(sent(t, t.copy()))
      t.dispose()
    }
    /** @type {Sent[]} */
    const slices = []
    const g = await open(event.data.data + PATHS.slices)
    for (const [name, spec] of SLICES) {
      const t = await g.slice(name, spec)
      slices.push(sent(t, t.copy()))
      t.dispose()
    }
    await g.close()
    const t = await f.tensor('model.embed_tokens.weight')
    const float32 = sent(t, t.toFloat32())
    // What an app that tries to transfer t.data meets: wasm memory's buffer is not detachable.
    let dataTransfer = 'transferred'
    try {
      const view = t.data
      scope.postMessage({ kind: 'error', error: errorReport(new Error('t.data was transferred')) }, [/** @type {ArrayBuffer} */ (view.buffer)])
    } catch (error) {
      dataTransfer = `refused: ${/** @type {Error} */ (error).name}`
    }
    t.dispose()
    await f.close()
    const sharded = await readEvery(open, event.data.data + PATHS.index)
    // The quantized files, dequantized here: the kernels load in the worker, on first use.
    const quant = await readQuantized(open, event.data.data, sent)
    // The streaming entries, hashed here (crypto.subtle in the worker).
    const stream = await readStreamed(open, event.data.data)
    const views = [...tensors, ...slices, float32].map((s) => s.data)
    const quantViews = Object.values(quant.files).flatMap((q) => [...q.weights, q.slice]).map((s) => s.data)
    scope.postMessage({ kind: 'result', names: [...loaded.keys()], tensors, slices, float32, quant, stream, sharded },
      [...views, ...quantViews].map((v) => /** @type {ArrayBuffer} */ (v.buffer)))
    scope.postMessage({ kind: 'detached', byteLengths: views.map((v) => v.byteLength),
      quantByteLengths: quantViews.map((v) => v.byteLength), dataTransfer })
  } catch (error) {
    scope.postMessage({ kind: 'error', error: errorReport(error) })
  }
}
