/**
 * A small .npy reader for tests, written from numpy's format description (format version 1.0 and
 * 2.0: magic, version, header length, the header dict as Python writes it, data), independent of
 * the inspector's encoder (web-demo/modules/export.js). Asserts the layout as it reads.
 */
import assert from 'node:assert/strict'

/**
 * Reads a .npy file: version, header text, the dict's fields, and the data as bytes.
 * @param {Uint8Array} bytes
 */
export function readNpy(bytes) {
  assert.deepEqual([...bytes.subarray(0, 6)], [0x93, ...Buffer.from('NUMPY')], 'magic')
  const major = bytes[6]
  assert.equal(bytes[7], 0, 'minor version')
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const lead = major === 1 ? 10 : 12
  const headerLength = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true)
  const header = Buffer.from(bytes.subarray(lead, lead + headerLength)).toString('latin1')
  assert.equal((lead + headerLength) % 64, 0, 'the data starts at a multiple of 64')
  assert.ok(header.endsWith('\n'), 'the header ends with a newline')
  const m = /^\{'descr': '([<|>][a-z]\d+)', 'fortran_order': (False|True), 'shape': \(([^)]*)\), \} *\n$/.exec(header)
  assert.ok(m, `a header numpy writes: ${JSON.stringify(header)}`)
  const dims = m[3].trim() === '' ? [] : m[3].split(',').map((d) => d.trim()).filter((d, i, all) => d !== '' || i < all.length - 1)
  if (dims.length === 1) assert.match(m[3], /^\d+,$/, 'a 1-tuple has its comma')
  return { major, header, descr: m[1], fortran: m[2] === 'True', shape: dims.map(Number), data: bytes.subarray(lead + headerLength) }
}

/**
 * The values of .npy data by descr, read with DataView (little-endian), independent of typed-array views.
 * @param {string} descr @param {Uint8Array} data @returns {any[]}
 */
export function valuesOf(descr, data) {
  const v = new DataView(data.buffer, data.byteOffset, data.byteLength)
  const size = Number(descr.slice(2))
  const n = data.byteLength / size
  const out = []
  for (let i = 0; i < n; i++) {
    const at = i * size
    switch (descr) {
      case '<f4': out.push(v.getFloat32(at, true)); break
      case '<f8': out.push(v.getFloat64(at, true)); break
      case '<f2': out.push(v.getFloat16 ? v.getFloat16(at, true) : half(v.getUint16(at, true))); break
      case '<i8': out.push(v.getBigInt64(at, true)); break
      case '<u8': out.push(v.getBigUint64(at, true)); break
      case '<i4': out.push(v.getInt32(at, true)); break
      case '<i2': out.push(v.getInt16(at, true)); break
      case '|b1': out.push(v.getUint8(at) !== 0); break
      case '|u1': out.push(v.getUint8(at)); break
      case '|i1': out.push(v.getInt8(at)); break
      case '<c8': out.push([v.getFloat32(at, true), v.getFloat32(at + 4, true)]); break
      default: throw new Error(`no reader for ${descr}`)
    }
  }
  return out
}

/** IEEE half from its bits. @param {number} h */
function half(h) {
  const s = h & 0x8000 ? -1 : 1
  const e = (h >> 10) & 31
  const f = h & 1023
  if (e === 0) return s * f * 2 ** -24
  if (e === 31) return f ? NaN : s * Infinity
  return s * (1 + f / 1024) * 2 ** (e - 15)
}

