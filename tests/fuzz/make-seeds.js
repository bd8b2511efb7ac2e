// Writes small valid files for the fuzzers to start from: `node make-seeds.js <dir>`.
// fuzz_index's seeds are *.index.json: a byte that seeds the chunk splits, then an index.
// Made by the project's own writer, so they cover every dtype, scalars, zero-size tensors,
// metadata and escaped names.
import { writeFile } from '../../js/node.js'
import { DTYPES } from '../../js/index.js'
import { writeFile as nodeWriteFile } from 'node:fs/promises'

const dir = process.argv[2]
const bits = { F4: 4, F6_E2M3: 6, F6_E3M2: 6, BOOL: 8, U8: 8, I8: 8, F8_E5M2: 8, F8_E4M3: 8, F8_E8M0: 8, F8_E4M3FNUZ: 8, F8_E5M2FNUZ: 8 }
/** @param {string} dtype @param {number[]} shape */
function tensor(dtype, shape) {
  const n = shape.reduce((a, b) => a * b, 1)
  const size = (n * (bits[dtype] ?? (dtype.endsWith('64') ? 64 : dtype.endsWith('32') ? 32 : 16))) / 8
  return { dtype, shape, data: new Uint8Array(size).map((_, i) => i * 37) }
}
await writeFile(`${dir}/all-dtypes.safetensors`, Object.fromEntries(DTYPES.map((d) => [`t.${d}`, tensor(d, [2, 4])])), { metadata: { format: 'pt', note: 'seed' } })
await writeFile(`${dir}/edge.safetensors`, { '': tensor('F32', []), 'a"b\\c\n': tensor('I64', [0, 3]), 'é': tensor('F4', [2]) })
await writeFile(`${dir}/empty.safetensors`, {})
await nodeWriteFile(`${dir}/seed.index.json`, '\x07' + JSON.stringify({ metadata: { total_size: 12, note: [1, -2.5e3, true, null] },
  weight_map: { 'a.w': 'model-1-of-2.safetensors', 'b\u00e9\u{1f600}\n': 'model-2-of-2.safetensors', 'a.x': 'model-1-of-2.safetensors' } }))
