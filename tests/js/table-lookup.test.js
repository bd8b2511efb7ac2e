// A file's lookup of a tensor by name (js/table.js TensorTable.indexOf, behind info(), has() and
// every read): names asked for in byte order are found one comparison each, others by a binary
// search, and what neither finds in a table of every name. Whatever the order of asking, each
// answer must be the name's position in file order, -1 for a name the file lacks; names whose
// UTF-16 order is not their byte order are among them.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { open, serialize } from '../../js/node.js'

// Written in an order that is neither file order (the writer's: by dtype, then name) nor name
// order; three names sort one way as UTF-16 and the other as bytes (U+FF01 against U+1F600).
const NAMES = ['b.2', 'a.10', 'x\u{1F600}', 'a.9', 'x\uFF01', 'x\uFF01\u{1F600}', 'c', 'a.1', 'é', '']
const DTYPES = ['F32', 'BF16', 'U8']

async function file() {
  /** @type {Record<string, { dtype: string, shape: number[], data: Uint8Array }>} */
  const tensors = {}
  NAMES.forEach((name, i) => {
    const dtype = DTYPES[i % DTYPES.length]
    tensors[name] = { dtype, shape: [i + 1], data: new Uint8Array((i + 1) * { F32: 4, BF16: 2, U8: 1 }[dtype]) }
  })
  return open(await serialize(tensors))
}

const bytes = (/** @type {string} */ a, /** @type {string} */ b) => Buffer.compare(Buffer.from(a), Buffer.from(b))

/** @type {Record<string, string[]>} the order of asking */
const ASKED = {
  'byte order': NAMES.slice().sort(bytes),
  'UTF-16 order': NAMES.slice().sort(),
  'reverse byte order': NAMES.slice().sort(bytes).reverse(),
  'byte order with absent names between': NAMES.slice().sort(bytes).flatMap((n) => [n, `${n}~absent`]),
  'each name twice': NAMES.flatMap((n) => [n, n]),
}

for (const [what, asked] of Object.entries(ASKED)) {
  test(`a file's tensors looked up by name in ${what}: each at its place in file order`, async () => {
    const f = await file()
    try {
      const inFileOrder = f.names
      for (const name of asked) {
        const want = inFileOrder.indexOf(name)
        if (want < 0) {
          assert.throws(() => f.info(name), { code: 'TensorNotFound' })
          continue
        }
        const info = f.info(name)
        assert.equal(info.name, name)
        assert.deepEqual(info.shape, [NAMES.indexOf(name) + 1], name)
      }
      for (const name of asked) assert.equal(f.has(name), inFileOrder.includes(name), name)
    } finally {
      await f.close()
    }
  })
}
