// The inspector's export encoders (web-demo/modules/export.js): .npy files read back by a small
// reader written here from numpy's format description (not the encoder's code), and JSON values
// parsed back (the reader: tests/js/npy-reader.js). Tensors come from the library (serialize, open), so BF16 and F8 go through its
// toFloat32 as the page's export does.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { open, serialize } from '../../js/node.js'
import { exportFileName, float32Text, jsonPieces, npyBytes, npyDescr, numpyHas } from '../../web-demo/modules/export.js'
import { readNpy, valuesOf } from './npy-reader.js'

/** Opens one tensor of the given dtype, shape and bytes; returns the .npy of it as the page makes it. */
async function exportOf(dtype, shape, data) {
  const f = await open(await serialize({ t: { dtype, shape, data } }))
  const t = await f.tensor('t')
  try {
    return npyBytes({ dtype, shape: t.shape, data: numpyHas(dtype) ? t.bytes.slice() : t.toFloat32() })
  } finally {
    t.dispose()
    await f.close()
  }
}

test('.npy of dtypes numpy has: descr, shape tuple, padding, the stored bytes', async () => {
  const f32 = new Float32Array([1.5, -2, NaN, Infinity, 0.1, -0])
  let r = readNpy(await exportOf('F32', [2, 3], f32))
  assert.equal(r.major, 1)
  assert.equal(r.descr, '<f4')
  assert.equal(r.fortran, false)
  assert.deepEqual(r.shape, [2, 3])
  assert.match(r.header, /'shape': \(2, 3\), \}/)
  assert.deepEqual(valuesOf(r.descr, r.data), [...f32])

  const big = new BigInt64Array([-(2n ** 62n) - 1n, 2n ** 53n + 1n, 7n])
  r = readNpy(await exportOf('I64', [3], big))
  assert.equal(r.descr, '<i8')
  assert.match(r.header, /'shape': \(3,\), \}/, 'a 1-D shape is a 1-tuple')
  assert.deepEqual(valuesOf(r.descr, r.data), [...big])

  r = readNpy(await exportOf('BOOL', [2, 2], new Uint8Array([1, 0, 0, 1])))
  assert.equal(r.descr, '|b1')
  assert.deepEqual(valuesOf(r.descr, r.data), [true, false, false, true])

  // F16 keeps its own bits: 1, -2, 65504, the smallest subnormal.
  r = readNpy(await exportOf('F16', [4], new Uint16Array([0x3c00, 0xc000, 0x7bff, 0x0001])))
  assert.equal(r.descr, '<f2')
  assert.deepEqual(valuesOf(r.descr, r.data), [1, -2, 65504, 2 ** -24])

  r = readNpy(await exportOf('C64', [2], new Float32Array([1, -1, 0.5, 2])))
  assert.equal(r.descr, '<c8')
  assert.deepEqual(valuesOf(r.descr, r.data), [[1, -1], [0.5, 2]])

  r = readNpy(await exportOf('F64', [], new Float64Array([Math.PI])))
  assert.equal(r.descr, '<f8')
  assert.match(r.header, /'shape': \(\), \}/, 'a scalar has the empty tuple')
  assert.deepEqual(valuesOf(r.descr, r.data), [Math.PI])

  r = readNpy(await exportOf('I8', [0, 3], new Int8Array(0)))
  assert.deepEqual(r.shape, [0, 3])
  assert.equal(r.data.length, 0)

  for (const [dtype, descr] of [['U8', '|u1'], ['I8', '|i1'], ['I16', '<i2'], ['U16', '<u2'], ['I32', '<i4'], ['U32', '<u4'], ['U64', '<u8']])
    assert.equal(npyDescr(dtype), descr)
})

test('.npy of dtypes numpy lacks is float32, decoded by the library', async () => {
  // BF16: 1, -2, NaN, -Infinity, 3.140625 (0x4049).
  let r = readNpy(await exportOf('BF16', [5], new Uint16Array([0x3f80, 0xc000, 0x7fc0, 0xff80, 0x4049])))
  assert.equal(r.descr, '<f4')
  assert.deepEqual(valuesOf(r.descr, r.data), [1, -2, NaN, -Infinity, 3.140625])
  // F8_E4M3: 0x38 = 1, 0xc0 = -2, 0x7e = 448 (the largest), 0x7f = NaN.
  r = readNpy(await exportOf('F8_E4M3', [2, 2], new Uint8Array([0x38, 0xc0, 0x7e, 0x7f])))
  assert.equal(r.descr, '<f4')
  assert.deepEqual(r.shape, [2, 2])
  assert.deepEqual(valuesOf(r.descr, r.data), [1, -2, 448, NaN])
  // F4 (E2M1), two per byte, low nibble first: 0x2 = 1, 0xc = -2, 0x7 = 6, 0x1 = 0.5.
  r = readNpy(await exportOf('F4', [4], new Uint8Array([0xc2, 0x17])))
  assert.deepEqual(valuesOf(r.descr, r.data), [1, -2, 6, 0.5])
  assert.throws(() => npyBytes({ dtype: 'BF16', shape: [1], data: new Uint16Array(1) }), /as float32/)
})

test('.npy headers are padded to 64 bytes whatever their length; a huge rank takes version 2.0', () => {
  for (let rank = 0; rank < 40; rank++) {
    const shape = Array.from({ length: rank }, (_, i) => (i % 7 === 0 ? 2 : i % 5 === 0 ? 3 : 1))
    const n = shape.reduce((a, b) => a * b, 1)
    const r = readNpy(npyBytes({ dtype: 'F32', shape, data: new Float32Array(n).fill(rank) }))
    assert.deepEqual(r.shape, shape)
    assert.deepEqual(valuesOf(r.descr, r.data), Array(n).fill(rank))
  }
  const r = readNpy(npyBytes({ dtype: 'U8', shape: Array(30000).fill(1), data: new Uint8Array([9]) }))
  assert.equal(r.major, 2)
  assert.equal(r.shape.length, 30000)
})

test('JSON values: nested in the shape, non-finite numbers as strings, exact integers, shortest floats', () => {
  const parse = (/** @type {string[]} */ pieces) => JSON.parse(pieces.join(''))
  let j = parse(jsonPieces({ name: 'a.b', dtype: 'F32', shape: [2, 2, 2], slice: '', values: new Float32Array([0.1, NaN, Infinity, -Infinity, 1, 2, 3, -0]) }))
  assert.deepEqual(j.shape, [2, 2, 2])
  assert.deepEqual(j.values, [[[0.1, 'NaN'], ['Infinity', '-Infinity']], [[1, 2], [3, -0]]])
  assert.equal(j.name, 'a.b')
  assert.ok(Object.is(j.values[1][1][1], -0), '-0 kept')

  const text = jsonPieces({ name: 'i', dtype: 'I64', shape: [2], slice: '0:2', values: new BigInt64Array([2n ** 63n - 1n, -5n]) }).join('')
  assert.match(text, /"values": \[9223372036854775807, -5\]/, '64-bit integers digit for digit')
  assert.equal(JSON.parse(text).slice, '0:2')

  assert.deepEqual(parse(jsonPieces({ name: 's', dtype: 'F64', shape: [], slice: '', values: new Float64Array([Math.E]) })).values, Math.E)
  assert.deepEqual(parse(jsonPieces({ name: 'b', dtype: 'BOOL', shape: [3], slice: '', values: new Uint8Array([1, 0, 1]) })).values, [true, false, true])
  assert.deepEqual(parse(jsonPieces({ name: 'c', dtype: 'C64', shape: [1, 2], slice: '', values: new Float32Array([1, 2, 3, NaN]) })).values, [[[1, 2], [3, 'NaN']]])
  assert.deepEqual(parse(jsonPieces({ name: 'z', dtype: 'F32', shape: [2, 0, 3], slice: '', values: new Float32Array(0) })).values, [[], []])
  assert.deepEqual(parse(jsonPieces({ name: 'z', dtype: 'F32', shape: [0], slice: '', values: new Float32Array(0) })).values, [])

  // Many values across pieces: every value comes back in its place.
  const n = 3 * 70000
  const many = new Float32Array(n).map((_, i) => Math.fround(i / 7))
  j = parse(jsonPieces({ name: 'm', dtype: 'F32', shape: [3, 70000], slice: '', values: many }))
  assert.equal(j.values.length, 3)
  for (let i = 0; i < n; i += 997) assert.equal(Math.fround(j.values[Math.floor(i / 70000)][i % 70000]), many[i])

  for (const x of [0.1, 1 / 3, 3.4028234663852886e38, 1e-45, 123456.789]) {
    const f = Math.fround(x)
    assert.equal(Math.fround(Number(float32Text(f))), f, `${f} reads back`)
  }
  assert.equal(float32Text(Math.fround(0.1)), '0.1')
})

test('export file names keep only safe characters', () => {
  assert.equal(exportFileName('model.layers.0.weight', '', 'npy'), 'model.layers.0.weight.npy')
  assert.equal(exportFileName('a/b\u202e', '0:4, :', 'json'), 'a_b_0_4_.json')
  assert.equal(exportFileName('../..', '', 'npy'), 'tensor.npy')
})

test('numpy itself reads the .npy files, when python3 has it', async (t) => {
  let hasNumpy = false
  try {
    execFileSync('python3', ['-c', 'import numpy'], { stdio: 'ignore' })
    hasNumpy = true
  } catch {
    // No numpy here: the reader above is the check.
  }
  if (!hasNumpy) {
    t.skip('python3 with numpy is not installed')
    return
  }
  const dir = mkdtempSync(join(tmpdir(), 'npy-'))
  try {
    writeFileSync(join(dir, 'a.npy'), await exportOf('BF16', [2, 1], new Uint16Array([0x3f80, 0xc000])))
    writeFileSync(join(dir, 'b.npy'), await exportOf('I64', [], new BigInt64Array([-(2n ** 60n)])))
    const out = execFileSync('python3', ['-c', 'import numpy as np, sys\nfor f in sys.argv[1:]:\n a = np.load(f)\n print(a.dtype.str, a.shape, a.tolist())',
      join(dir, 'a.npy'), join(dir, 'b.npy')]).toString()
    assert.equal(out, `<f4 (2, 1) [[1.0], [-2.0]]\n<i8 () ${-(2n ** 60n)}\n`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
