// Every file the reference implementation wrote (../shared/corpus/reference/) comes back byte
// for byte when read with open() and written again with serialize, serializeStream and
// writeFile: the writer's order, offsets, header JSON and padding are the reference's.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { open, serialize, serializeStream, writeFile } from '../../js/node.js'

const REFERENCE = fileURLToPath(new URL('../../../shared/corpus/reference/', import.meta.url))
const files = existsSync(REFERENCE) ? (await readdir(REFERENCE)).filter((n) => n.endsWith('.safetensors')).sort() : []

/** @param {ReadableStream<Uint8Array>} stream */
async function drain(stream) {
  const chunks = []
  for await (const chunk of /** @type {any} */ (stream)) chunks.push(new Uint8Array(chunk))
  return new Uint8Array(Buffer.concat(chunks))
}

/** @param {Uint8Array} got @param {Uint8Array} want */
function firstDifference(got, want) {
  const n = Math.min(got.length, want.length)
  for (let i = 0; i < n; i++) if (got[i] !== want[i]) return i
  return got.length === want.length ? -1 : n
}

/** @type {string} */
let dir
before(async () => { dir = await mkdtemp(join(tmpdir(), 'st-reference-')) })
after(async () => { await rm(dir, { recursive: true }) })

test('the reference corpus is there', (t) => {
  if (files.length === 0) return t.skip(`no reference files in ${REFERENCE}`)
  assert.ok(files.length >= 18, `${files.length} files`)
})

for (const name of files) {
  test(`${name}: serialize, serializeStream and writeFile reproduce it`, async () => {
    const want = new Uint8Array(await readFile(join(REFERENCE, name)))
    const f = await open(join(REFERENCE, name))
    const tensors = await f.load(f.names)
    try {
      const options = { metadata: f.metadata }
      /** @param {string} how @param {Uint8Array} got */
      const same = (how, got) => {
        const at = firstDifference(got, want)
        assert.equal(at, -1, `${how}: ${got.length} bytes vs ${want.length}, first difference at byte ${at}`)
      }
      same('serialize', await serialize(tensors, options))
      same('serializeStream', await drain(await serializeStream(tensors, options)))
      const path = join(dir, name)
      await writeFile(path, tensors, options)
      same('writeFile', new Uint8Array(await readFile(path)))
      await rm(path)
    } finally {
      for (const t of tensors.values()) t.dispose()
      await f.close()
    }
  })
}
