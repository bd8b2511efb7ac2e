// What npm ships and who can load it: the tarball's files (LICENSE included, as package.json's
// "license" promises), and the entries as Node apps load them: import, and require() from
// CommonJS, which works from Node 20.19 and 22.12 on (require of ES modules, unflagged), the
// versions `engines` claims and the tests run on.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtemp, mkdir, rm, symlink, writeFile, readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { serialize } from '../../js/node.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8'))

test('the tarball holds LICENSE, the README, the JS layer and the built modules, and no sources or tests', () => {
  const [report] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8' }))
  const files = new Set(report.files.map((/** @type {{ path: string }} */ f) => f.path))
  for (const want of ['LICENSE', 'README.md', 'package.json', 'js/index.js', 'js/node.js', 'js/index.d.ts', 'js/cli/main.js',
    'dist/safetensors_core.mjs', 'dist/safetensors_core_nosimd.mjs', 'dist/safetensors_index.mjs', 'dist/safetensors_quant.mjs',
    'dist/safetensors_quant_nosimd.mjs', 'dist/safetensors_digest.mjs'])
    assert.ok(files.has(want), `${want} is in the tarball`)
  for (const path of files) assert.ok(!/^(src|tests|bench|web-demo|build|\.ci)\//.test(path), `${path} is not shipped`)
  const license = report.files.find((/** @type {{ path: string }} */ f) => f.path === 'LICENSE')
  assert.ok(license.size > 10000, 'the whole Apache-2.0 text')
  assert.equal(pkg.license, 'Apache-2.0')
})

test('engines claims the Node versions that can require() the package, and this Node is one of them', () => {
  assert.equal(pkg.engines.node, '^20.19.0 || >=22.12.0')
  const [major, minor] = process.versions.node.split('.').map(Number)
  assert.ok((major === 20 && minor >= 19) || (major === 22 && minor >= 12) || major > 22, `Node ${process.versions.node}`)
})

test('require("safetensors-wasm") from CommonJS and import from an ES module, as apps load the package', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'st-package-'))
  try {
    await mkdir(join(dir, 'node_modules'))
    await symlink(ROOT, join(dir, 'node_modules', 'safetensors-wasm'), 'dir')
    await writeFile(join(dir, 'model.safetensors'), await serialize({ x: { dtype: 'U8', shape: [2], data: new Uint8Array([7, 9]) } }))
    await writeFile(join(dir, 'app.cjs'), `const { open, SafetensorsError } = require('safetensors-wasm')
open('model.safetensors').then(async (f) => {
  console.log(JSON.stringify([...(await f.tensor('x')).data]), typeof SafetensorsError)
})
`)
    await writeFile(join(dir, 'app.mjs'), `import { open } from 'safetensors-wasm'
const f = await open('model.safetensors')
console.log(JSON.stringify([...(await f.tensor('x')).data]))
`)
    const env = { ...process.env, NODE_PATH: '' }
    assert.equal(execFileSync(process.execPath, ['app.cjs'], { cwd: dir, env, encoding: 'utf8' }).trim(), '[7,9] function')
    assert.equal(execFileSync(process.execPath, ['app.mjs'], { cwd: dir, env, encoding: 'utf8' }).trim(), '[7,9]')
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})
