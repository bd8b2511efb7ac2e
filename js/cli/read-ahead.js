/**
 * Tensors read ahead of a writer that takes them one at a time, in a known order. Over HTTP each
 * read costs a round trip, so a checkpoint of thousands of small tensors converted one read after
 * another spends its time waiting; here, while one tensor is written, the next ones (up to
 * `tensors` of them and `bytes` in all, in the wasm heap) are already being fetched. A tensor
 * larger than `bytes` is not read ahead: take() gives null, and the writer streams it itself.
 */

/**
 * @typedef {{ name: string, byteLength: number }} Wanted
 * @typedef {import('../index.js').Tensor} Tensor
 * @typedef {{ tensor(name: string, options?: { signal?: AbortSignal }): Promise<Tensor> }} Reader
 */

/**
 * @param {Reader} f
 * @param {Wanted[]} order the tensors in the order take() will ask for them
 * @param {{ signal?: AbortSignal, tensors?: number, bytes?: number }} [options]
 * @returns {{ take(name: string): Promise<Tensor | null>, dispose(): void }}
 *   take: the tensor (the caller disposes it), or null when it was not read ahead; dispose: every
 *   tensor read ahead and not taken is freed (as it arrives, for reads still under way)
 */
export function readAhead(f, order, options = {}) {
  const { signal } = options
  const maxTensors = options.tensors ?? 8
  const maxBytes = options.bytes ?? 64 << 20
  /** @type {Map<string, { bytes: number, read: Promise<Tensor> }>} */
  const pending = new Map()
  let next = 0  // the first of `order` not started (nor passed over)
  let held = 0  // the bytes of the reads started and not taken
  let disposed = false

  const fill = () => {
    while (!disposed && next < order.length && pending.size < maxTensors) {
      const { name, byteLength } = order[next]
      if (byteLength > maxBytes) break  // streamed by the writer when its turn comes
      if (held + byteLength > maxBytes) break
      next++
      held += byteLength
      const read = f.tensor(name, { signal })
      read.catch(() => {})  // reported when taken
      pending.set(name, { bytes: byteLength, read })
    }
  }

  return {
    async take(name) {
      fill()
      const p = pending.get(name)
      if (!p) {
        // Not read ahead (too large, or out of order): the ones before it are passed over.
        const at = order.findIndex((w, i) => i >= next && w.name === name)
        if (at >= 0) next = at + 1
        fill()
        return null
      }
      pending.delete(name)
      held -= p.bytes
      fill()
      return p.read
    },
    dispose() {
      disposed = true
      for (const { read } of pending.values()) read.then((t) => t.dispose(), () => {})
      pending.clear()
    },
  }
}
