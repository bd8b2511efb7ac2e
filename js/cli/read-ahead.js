/**
 * Tensors read ahead of a writer that takes them one at a time, in a known order. Over HTTP each
 * read costs a round trip, so a checkpoint of thousands of small tensors converted one read after
 * another spends its time waiting. Here, while one tensor is written, the next ones are already
 * being fetched: in batches of neighbours (one `load`, whose close ranges are one request), up to
 * `batches` batches and `bytes` in all in the wasm heap. A tensor larger than `bytes` is not read
 * ahead: take() gives null, and the writer streams it itself.
 */

/**
 * @typedef {{ name: string, byteLength: number }} Wanted
 * @typedef {import('../index.js').Tensor} Tensor
 * @typedef {{ load(names: string[], options?: { signal?: AbortSignal }): Promise<Map<string, Tensor>> }} Reader
 * @typedef {{ read: Promise<Map<string, Tensor>>, left: number }} Batch
 */

/**
 * @param {Reader} f
 * @param {Wanted[]} order the tensors in the order take() will ask for them
 * @param {{ signal?: AbortSignal, bytes?: number, batches?: number, batchBytes?: number }} [options]
 *   bytes: read ahead and not taken, at most (64 MiB); batches: reads under way or not all taken,
 *   at most (4); batchBytes: a batch's bytes, at most (bytes / 8)
 * @returns {{ take(name: string): Promise<Tensor | null>, dispose(): void }}
 *   take: the tensor (the caller disposes it), or null when it was not read ahead; dispose: every
 *   tensor read ahead and not taken is freed (as it arrives, for reads still under way)
 */
export function readAhead(f, order, options = {}) {
  const { signal } = options
  const maxBytes = options.bytes ?? 64 << 20
  const maxBatches = options.batches ?? 4
  const batchBytes = options.batchBytes ?? Math.max(1, Math.floor(maxBytes / 8))
  /** @type {Map<string, { batch: Batch, bytes: number }>} */
  const ahead = new Map()
  /** @type {Set<Batch>} */
  const open = new Set()
  let next = 0  // the first of `order` not read ahead (nor passed over)
  let held = 0  // the bytes read ahead and not taken
  let disposed = false

  const fits = (/** @type {number} */ bytes, /** @type {number} */ n) => order[next].byteLength <= maxBytes &&
    held + bytes + order[next].byteLength <= maxBytes && (n === 0 || bytes + order[next].byteLength <= batchBytes)

  const fill = () => {
    while (!disposed && next < order.length && open.size < maxBatches) {
      /** @type {string[]} */
      const names = []
      let bytes = 0
      const start = next
      while (next < order.length && fits(bytes, names.length)) {
        names.push(order[next].name)
        bytes += order[next].byteLength
        next++
      }
      if (names.length === 0) break  // the next is too large, or waits for room
      const read = f.load(names, { signal })
      read.catch(() => {})  // reported when taken
      const batch = { read, left: names.length }
      open.add(batch)
      for (let i = start; i < next; i++) ahead.set(order[i].name, { batch, bytes: order[i].byteLength })
      held += bytes
    }
  }

  return {
    async take(name) {
      fill()
      const a = ahead.get(name)
      if (!a) {
        // Not read ahead (too large, or out of order): the ones before it are passed over.
        const at = order.findIndex((w, i) => i >= next && w.name === name)
        if (at >= 0) next = at + 1
        fill()
        return null
      }
      ahead.delete(name)
      const map = await a.batch.read
      const t = /** @type {Tensor} */ (map.get(name))
      map.delete(name)
      held -= a.bytes
      if (--a.batch.left === 0) open.delete(a.batch)
      fill()
      return t
    },
    dispose() {
      disposed = true
      for (const batch of open) batch.read.then((map) => { for (const t of map.values()) t.dispose() }, () => {})
      open.clear()
      ahead.clear()
    },
  }
}
