// One test per error the reader can give, each built from a byte literal, asserting the whole
// SafetensorsError: class, code, tensor, offset and the full message (the texts come from
// src/header.cpp, src/header_json.cpp, src/slice.cpp and the JS layer).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile as fsWriteFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SafetensorsError, blobSource, bytesSource, nodeFileSource, open } from '../../js/node.js'

const encoder = new TextEncoder()

/**
 * A file: N as 8 little-endian bytes, the header bytes, then `dataLength` data bytes (1, 2, ...).
 * @param {string | number[]} header JSON text, or raw header bytes
 * @param {number} [dataLength]
 */
function file(header, dataLength = 0) {
  const h = typeof header === 'string' ? encoder.encode(header) : Uint8Array.from(header)
  const out = new Uint8Array(8 + h.length + dataLength)
  new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true)
  out.set(h, 8)
  for (let i = 0; i < dataLength; i++) out[8 + h.length + i] = i + 1
  return out
}

/**
 * Runs `fn` and checks that it fails with exactly this SafetensorsError.
 * @param {() => unknown} fn
 * @param {{ code: string, tensor: string | null, offset: number | null, message: string }} expected
 */
async function expectError(fn, expected) {
  let error
  try {
    await fn()
  } catch (e) {
    error = e
  }
  assert.ok(error !== undefined, `expected ${expected.code}, but nothing was thrown`)
  assert.ok(!(error instanceof WebAssembly.Exception), 'a C++ error arrived as a WebAssembly.Exception')
  assert.ok(error instanceof SafetensorsError, `expected a SafetensorsError, got ${error}`)
  assert.equal(error.name, 'SafetensorsError')
  assert.deepEqual(
    { code: error.code, tensor: error.tensor, offset: error.offset, message: error.message },
    expected)
  return error
}

// --- Rules 1-3: the length prefix -------------------------------------------------------

test('HeaderTooSmall: a file shorter than 8 bytes', async () => {
  await expectError(() => open(new Uint8Array([1, 0, 0, 0, 0])), {
    code: 'HeaderTooSmall', tensor: null, offset: 0,
    message: 'file is 5 bytes, shorter than the 8-byte header length',
  })
  await expectError(() => open(new Uint8Array(0)), {
    code: 'HeaderTooSmall', tensor: null, offset: 0,
    message: 'file is 0 bytes, shorter than the 8-byte header length',
  })
})

test('HeaderTooLarge: N = 100,000,001 (one past the limit)', async () => {
  await expectError(() => open(new Uint8Array([0x01, 0xe1, 0xf5, 0x05, 0, 0, 0, 0, 0x7b, 0x7d])), {
    code: 'HeaderTooLarge', tensor: null, offset: 0,
    message: 'header length 100000001 exceeds the limit of 100000000 bytes',
  })
  // Exactly 100,000,000 is allowed by rule 2, so the short file fails rule 3 instead.
  await expectError(() => open(new Uint8Array([0x00, 0xe1, 0xf5, 0x05, 0, 0, 0, 0, 0x7b, 0x7d])), {
    code: 'InvalidHeaderLength', tensor: null, offset: 0,
    message: 'header of 100000000 bytes ends at file byte 100000008 but the file is 10 bytes',
  })
})

test('InvalidHeaderLength: 8 + N past the end of the file', async () => {
  await expectError(() => open(new Uint8Array([100, 0, 0, 0, 0, 0, 0, 0, 0x7b, 0x7d])), {
    code: 'InvalidHeaderLength', tensor: null, offset: 0,
    message: 'header of 100 bytes ends at file byte 108 but the file is 10 bytes',
  })
})

// --- Rules 4-5: the header text ---------------------------------------------------------

test('InvalidHeader: a header byte that is not UTF-8', async () => {
  // {"\xFF":1}
  await expectError(() => open(file([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])), {
    code: 'InvalidHeader', tensor: null, offset: 10,
    message: 'header is not valid UTF-8: bad byte 0xFF at header byte 2',
  })
})

test('InvalidHeaderDeserialization: not JSON, with the parser position', async () => {
  await expectError(() => open(file('{x')), {
    code: 'InvalidHeaderDeserialization', tensor: null, offset: 10,
    message: 'header is not valid JSON: [json.exception.parse_error.101] parse error at line 1, ' +
      "column 2: syntax error while parsing object key - invalid literal; last read: '{x'; expected string literal",
  })
  await expectError(() => open(file('{}{}')), {
    code: 'InvalidHeaderDeserialization', tensor: null, offset: 11,
    message: 'header is not valid JSON: [json.exception.parse_error.101] parse error at line 1, ' +
      "column 3: syntax error while parsing value - unexpected '{'; expected end of input",
  })
})

test('InvalidHeaderDeserialization: a control character in the message as <U+XXXX> (the module\'s own snprintf)', async () => {
  const header = '{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}'
  await expectError(() => open(file(header + '\f', 1)), {
    code: 'InvalidHeaderDeserialization', tensor: null, offset: 8 + header.length + 1,  // past the form feed
    message: 'header is not valid JSON: [json.exception.parse_error.101] parse error at line 1, ' +
      "column 54: syntax error while parsing value - invalid literal; last read: '1]}}<U+000C>'; expected end of input",
  })
})

test('InvalidHeaderDeserialization: a number beyond the double range (the module\'s own strtod)', async () => {
  // The reference parses even ignored numbers; 1.7976931348623158e308 still rounds to DBL_MAX,
  // ...159e308 is past the midpoint to 2^1024.
  const header = (/** @type {string} */ x) => `{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":${x}}}`
  for (const x of ['1.7976931348623157e308', '-1.7976931348623158e308', '1e-999'])
    assert.deepEqual((await open(file(header(x), 1))).names, ['a'], x)
  for (const x of ['1.7976931348623159e308', '-1e999']) {
    await expectError(() => open(file(header(x), 1)), {
      code: 'InvalidHeaderDeserialization', tensor: null, offset: 8 + header(x).indexOf(x) + x.length,
      message: `header is not valid JSON: [json.exception.out_of_range.406] number overflow parsing '${x}'`,
    })
  }
})

test('InvalidHeaderDeserialization: valid JSON of the wrong shape', async () => {
  await expectError(() => open(file('[]')), {
    code: 'InvalidHeaderDeserialization', tensor: null, offset: 9,
    message: 'header is an array, not a JSON object',
  })
  const dtype = '{"a":{"dtype":"F33","shape":[],"data_offsets":[0,4]}}'
  await expectError(() => open(file(dtype, 4)), {
    code: 'InvalidHeaderDeserialization', tensor: 'a', offset: 8 + dtype.indexOf('F33') + 4,
    message: 'unknown dtype "F33"',
  })
  const float = '{"a":{"dtype":"U8","shape":[1.0],"data_offsets":[0,1]}}'
  // Just past the number, as past any token (the lexer reads the ']' to see where it ends).
  await expectError(() => open(file(float, 1)), {
    code: 'InvalidHeaderDeserialization', tensor: 'a', offset: 8 + float.indexOf('1.0') + 3,
    message: 'shape of tensor "a" contains a non-integer number, not a non-negative integer',
  })
  const meta = '{"__metadata__":{"k":1}}'
  await expectError(() => open(file(meta)), {
    code: 'InvalidHeaderDeserialization', tensor: null, offset: 8 + meta.indexOf('1') + 1,
    message: 'metadata value of "k" is an integer, not a string',
  })
})

test('InvalidHeaderDeserialization: a duplicate tensor name (stricter than the reference)', async () => {
  const header = '{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}'
  await expectError(() => open(file(header, 2)), {
    code: 'InvalidHeaderDeserialization', tensor: 'a', offset: 8,
    message: 'duplicate tensor name "a"',
  })
})

// nlohmann's lexer takes a NUL byte for the end of input; the core must still see what follows
// (another parser would read the second object here).
test('InvalidHeaderDeserialization: a NUL byte after the object', async () => {
  await expectError(() => open(file('{}\0xyz')), {
    code: 'InvalidHeaderDeserialization', tensor: null, offset: 10,
    message: 'header has a NUL byte after the JSON object',
  })
  const valid = '{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}'
  await expectError(() => open(file(`${valid}\0{"b":{"dtype":"U8","shape":[9],"data_offsets":[0,9]}}`, 1)), {
    code: 'InvalidHeaderDeserialization', tensor: null, offset: 8 + valid.length,
    message: 'header has a NUL byte after the JSON object',
  })
})

// --- Rules 6-10: the layout -------------------------------------------------------------

test('InvalidOffset: a gap at the start of the data buffer', async () => {
  const header = '{"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}'
  await expectError(() => open(file(header, 2)), {
    code: 'InvalidOffset', tensor: 'a', offset: 8 + header.length + 1,
    message: 'tensor "a" data_offsets [1, 2]: begins at 1, expected 0 (tensors must tile the data buffer)',
  })
})

test('InvalidOffset: a tensor that ends before it begins', async () => {
  const header = '{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"b":{"dtype":"U8","shape":[0],"data_offsets":[1,0]}}'
  await expectError(() => open(file(header, 1)), {
    code: 'InvalidOffset', tensor: 'b', offset: 8 + header.length + 1,
    message: 'tensor "b" data_offsets [1, 0]: ends before it begins',
  })
})

test('ValidationOverflow: element count over 64 bits, and bit count over 64 bits', async () => {
  const elements = '{"a":{"dtype":"U8","shape":[4294967296,4294967296],"data_offsets":[0,0]}}'
  await expectError(() => open(file(elements)), {
    code: 'ValidationOverflow', tensor: 'a', offset: 8 + elements.length,
    message: 'tensor "a" shape [4294967296, 4294967296]: element count overflows 64 bits',
  })
  const bits = '{"a":{"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,0]}}'
  await expectError(() => open(file(bits)), {
    code: 'ValidationOverflow', tensor: 'a', offset: 8 + bits.length,
    message: 'tensor "a" 4611686018427387904 elements of F32: bit count overflows 64 bits',
  })
})

test('MisalignedSlice: an F4 tensor of an odd element count', async () => {
  const header = '{"a":{"dtype":"F4","shape":[3],"data_offsets":[0,1]}}'
  await expectError(() => open(file(header, 1)), {
    code: 'MisalignedSlice', tensor: 'a', offset: 8 + header.length,
    message: 'tensor "a" 3 elements of F4 are 12 bits, not a whole number of bytes',
  })
})

test('TensorInvalidInfo: data_offsets that do not span the shape', async () => {
  const header = '{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}'
  await expectError(() => open(file(header, 4)), {
    code: 'TensorInvalidInfo', tensor: 'a', offset: 8 + header.length,
    message: 'tensor "a" F32 [2] needs 8 bytes but data_offsets [0, 4] span 4',
  })
})

test('MetadataIncompleteBuffer: trailing bytes after the last tensor, or too few', async () => {
  const header = '{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}'
  const end = 8 + header.length + 2
  await expectError(() => open(file(header, 3)), {
    code: 'MetadataIncompleteBuffer', tensor: null, offset: end,
    message: `tensors end at file byte ${end} but the file is ${end + 1} bytes`,
  })
  await expectError(() => open(file(header, 1)), {
    code: 'MetadataIncompleteBuffer', tensor: null, offset: end,
    message: `tensors end at file byte ${end} but the file is ${end - 1} bytes`,
  })
})

// --- Asking for what is not there ---------------------------------------------------------

const A23 = '{"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}}'
const A23_START = 8 + A23.length

test('TensorNotFound: info, tensor, load and slice of a missing name', async () => {
  const f = await open(file(A23, 24))
  const expected = { code: 'TensorNotFound', tensor: 'b', offset: null, message: 'no tensor named "b" in this file' }
  await expectError(() => f.info('b'), expected)
  await expectError(() => f.tensor('b'), expected)
  await expectError(() => f.load(['a', 'b']), expected)
  await expectError(() => f.slice('b', '0'), expected)
})

// --- Slicing ------------------------------------------------------------------------------
/**
 * @param {() => unknown} fn
 * @param {{ code: string, tensor: string, offset: number, message: string }} expected
 */
const expectSliceError = expectError

test('TooManySlices: more indexers than dimensions, and any indexer on a scalar', async () => {
  const f = await open(file(A23, 24))
  await expectSliceError(() => f.slice('a', '0, 1, 2'), {
    code: 'TooManySlices', tensor: 'a', offset: A23_START,
    message: 'tensor "a" F32 [2, 3]: 3 indexers for 2 dimensions',
  })
  const scalar = '{"s":{"dtype":"I64","shape":[],"data_offsets":[0,8]}}'
  const g = await open(file(scalar, 8))
  await expectSliceError(() => g.slice('s', [0]), {
    code: 'TooManySlices', tensor: 's', offset: 8 + scalar.length,
    message: 'tensor "s" I64 []: 1 indexers for 0 dimensions',
  })
})

test('SliceOutOfRange: an index or a bound outside its dimension', async () => {
  const f = await open(file(A23, 24))
  await expectSliceError(() => f.slice('a', '2'), {
    code: 'SliceOutOfRange', tensor: 'a', offset: A23_START,
    message: 'tensor "a" F32 [2, 3]: index 2 is outside of dimension 0 (size 2)',
  })
  await expectSliceError(() => f.slice('a', [-3]), {
    code: 'SliceOutOfRange', tensor: 'a', offset: A23_START,
    message: 'tensor "a" F32 [2, 3]: index -3 is outside of dimension 0 (size 2)',
  })
  await expectSliceError(() => f.slice('a', ':, 0:4'), {
    code: 'SliceOutOfRange', tensor: 'a', offset: A23_START,
    message: 'tensor "a" F32 [2, 3]: range 0:4: stop 4 is outside of dimension 1 (size 3)',
  })
})

test('InvalidSlice: start > stop, a spec that does not parse, a spec of the wrong type', async () => {
  const f = await open(file(A23, 24))
  const reversed = {
    code: 'InvalidSlice', tensor: 'a', offset: A23_START,
    message: 'tensor "a" F32 [2, 3]: range 1:0 of dimension 0 (size 2) resolves to start 1 > stop 0',
  }
  await expectSliceError(() => f.slice('a', '1:0'), reversed)
  await expectSliceError(() => f.slice('a', [[1, 0]]), reversed)
  // A spec that does not parse is placed at the tensor it was meant for.
  await expectError(() => f.slice('a', '0::2'), {
    code: 'InvalidSlice', tensor: 'a', offset: A23_START,
    message: 'slice spec "0::2": steps are not supported, found \':\' at position 2',
  })
  await expectError(() => f.slice('a', /** @type {any} */ (5)), {
    code: 'InvalidSlice', tensor: 'a', offset: null,
    message: 'a slice is a string like "0, 2:5" or an array like [0, [2, 5]]',
  })
  await expectError(() => f.slice('a', [1.5]), {
    code: 'InvalidSlice', tensor: 'a', offset: null,
    message: 'slice element 1.5 (dimension 0) is not an integer, [start, stop] or null',
  })
})

test('MisalignedSlice: an F4 slice that starts or ends inside a byte', async () => {
  const header = '{"q":{"dtype":"F4","shape":[2,3],"data_offsets":[0,3]}}'
  const f = await open(file(header, 3))
  await expectSliceError(() => f.slice('q', '0'), {
    code: 'MisalignedSlice', tensor: 'q', offset: 8 + header.length + 1,
    message: 'tensor "q" F4 [2, 3]: a slice range would begin or end at bit 12 of the tensor\'s data, inside byte 1',
  })
})

// --- Lifetimes and sources ----------------------------------------------------------------

test('Disposed: every use of a disposed tensor', async () => {
  const f = await open(file(A23, 24))
  const t = await f.tensor('a')
  t.dispose()
  const expected = { code: 'Disposed', tensor: 'a', offset: null, message: 'tensor "a" was disposed' }
  await expectError(() => t.data, expected)
  await expectError(() => t.bytes, expected)
  await expectError(() => t.copy(), expected)
  await expectError(() => t.toFloat32(), expected)
  await expectError(() => t.stats(), expected)
})

test('OutOfRange: reads outside a source', async () => {
  const bytes = new Uint8Array(20)
  const message = "read of 100 bytes at offset 10 is outside the source's 20 bytes"
  await expectError(() => bytesSource(bytes).read(10, 100), { code: 'OutOfRange', tensor: null, offset: 10, message })
  await expectError(() => blobSource(new Blob([bytes])).read(10, 100), { code: 'OutOfRange', tensor: null, offset: 10, message })
  await expectError(() => bytesSource(bytes).read(-1, 2), {
    code: 'OutOfRange', tensor: null, offset: -1, message: "read of 2 bytes at offset -1 is outside the source's 20 bytes",
  })
  const dir = await mkdtemp(join(tmpdir(), 'st-errors-'))
  try {
    await fsWriteFile(join(dir, 'x.bin'), bytes)
    const source = await nodeFileSource(join(dir, 'x.bin'))
    try {
      await expectError(() => source.read(10, 100), { code: 'OutOfRange', tensor: null, offset: 10, message })
    } finally {
      await source.close?.()
    }
  } finally {
    await rm(dir, { recursive: true })
  }
})
