/**
 * Safetensors files whose data bytes are made on read, never stored: a ByteSource of any size
 * (several GiB) for tests of bounded memory. The header is real; `fill` makes the data bytes.
 *
 *   const source = virtualFile({ w: { dtype: 'U8', shape: [n], data_offsets: [0, n] } }, n,
 *     (out, offset) => out.fill(7))           // offset: of out[0] in the data section
 *   const f = await open(source)
 */

/**
 * The length prefix and the header of a file whose header is `header`, padded with spaces to a
 * multiple of 8 bytes (so the data starts aligned, as writers do).
 * @param {object} header
 */
export function fileStart(header) {
  const json = new TextEncoder().encode(JSON.stringify(header))
  const padded = new Uint8Array(json.length + ((8 - ((8 + json.length) % 8)) % 8)).fill(0x20)
  padded.set(json)
  const prefix = new Uint8Array(8 + padded.length)
  new DataView(prefix.buffer).setBigUint64(0, BigInt(padded.length), true)
  prefix.set(padded, 8)
  return prefix
}

/**
 * A ByteSource (read and readInto) of a file with header `header` and `dataLength` data bytes,
 * which `fill(out, offset)` writes into `out`: the data bytes from `offset` on.
 * @param {object} header
 * @param {number} dataLength
 * @param {(out: Uint8Array, offset: number) => void} fill
 */
export function virtualFile(header, dataLength, fill) {
  const prefix = fileStart(header)
  /** @param {Uint8Array} out @param {number} offset */
  const write = (out, offset) => {
    const head = Math.max(0, Math.min(out.length, prefix.length - offset))
    if (head > 0) out.set(prefix.subarray(offset, offset + head))
    if (head < out.length) fill(out.subarray(head), offset + head - prefix.length)
  }
  return {
    byteLength: prefix.length + dataLength,
    async read(/** @type {number} */ offset, /** @type {number} */ length) {
      const out = new Uint8Array(length)
      write(out, offset)
      return out
    },
    async readInto(/** @type {number} */ offset, /** @type {number} */ length, /** @type {(at: number, n: number) => Uint8Array} */ viewAt) {
      write(viewAt(0, length), offset)
    },
  }
}
