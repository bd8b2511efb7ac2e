// Name patterns (--only, stats): a glob gives the answers of the regex it used to be compiled
// to, in time linear in the name (a 640 kB hostile name with three stars took minutes); a
// /regex/ runs on the linear-time engine (/i ones rewritten for it, with the same answers), and
// one that engine cannot run is refused.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { open, serialize, SafetensorsError } from '../../js/node.js'
import { namePattern } from '../../js/cli/convert.js'
import { prng } from '../fixtures/make-sample.js'

const CLI = fileURLToPath(new URL('../../js/cli/main.js', import.meta.url))

/** The glob as the regex it was compiled to before: the reference for its answers. @param {string} glob */
function reference(glob) {
  const source = Array.from(glob, (c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[\\^$.|+(){}[\]]/g, '\\$&'))).join('')
  const re = new RegExp(`^${source}$`, 'su')
  return (/** @type {string} */ name) => re.test(name)
}

/** '.layers.' over and over: every star of '*.layers.*.weight' has every position to try. @param {number} bytes */
const hostile = (bytes) => '.layers.'.repeat(bytes / 8)

describe('namePattern', () => {
  test('a glob agrees with the regex reference on random small globs and names', () => {
    const random = prng(35)
    const pick = (/** @type {string[]} */ a) => a[Math.floor(random() * a.length)]
    const nameChars = ['a', 'b', '.', '😀', '\n']
    const globChars = [...nameChars, '*', '?']
    let matched = 0
    for (let i = 0; i < 20_000; i++) {
      const glob = Array.from({ length: Math.floor(random() * 7) }, () => pick(globChars)).join('')
      const name = Array.from({ length: Math.floor(random() * 9) }, () => pick(nameChars)).join('')
      const want = reference(glob)(name)
      assert.equal(namePattern(glob)(name), want, `${JSON.stringify(glob)} on ${JSON.stringify(name)}`)
      if (want) matched++
    }
    assert.ok(matched > 1000, `the cases match often enough to test matching (${matched})`)
  })

  test('globs with two and three stars over 320 kB and 640 kB hostile names take well under 2 s in all', () => {
    // Compiled to a backtracking regex these took 12 s, 36 s and minutes each (bench note in
    // js/cli/name-pattern.js); here each is a few indexOf scans.
    const started = performance.now()
    for (const bytes of [320_000, 640_000]) {
      const name = hostile(bytes)
      assert.equal(namePattern('*.layers.*.weight')(name), false)
      assert.equal(namePattern('*.layers.*.*.weight')(name), false)
      assert.equal(namePattern('*.la?ers.*.*.w?ight')(name), false)
      assert.equal(namePattern('*.layers.*.*.layers.')(name), true)
      assert.equal(namePattern(`*.layers.*.*${'?'.repeat(8)}`)(name), true)
    }
    assert.ok(performance.now() - started < 2000, `${Math.round(performance.now() - started)} ms`)
  })

  test('an /i regex agrees with the ordinary engine on random small regexes and names', () => {
    // Characters whose case is unusual: the Kelvin sign, long s, dotless and dotted i, micro sign.
    const random = prng(7)
    const pick = (/** @type {string[]} */ a) => a[Math.floor(random() * a.length)]
    const pieces = ['a', 'A', 'b', 'K', 'k', '\u212A', 'ß', 'µ', 'Μ', '.', '*', '+', '?', '[a-c]', '[^b]', '[A-z]', '\\w', '\\W',
      '\\x41', '(', ')', '|', '^', '$', '\\.', 'é', 'É', 'ſ', 's', 'S', '{1,2}', '[\\w-]', '[^\\W_]', '[k-\u212A]', '\\u0131', 'ı', 'İ', 'I']
    const chars = ['a', 'A', 'b', 'B', 'k', 'K', '\u212A', 's', 'S', 'ſ', 'ß', 'é', 'É', '.', '[', '_', 'µ', 'Μ', 'μ', 'z', '`', 'ı', 'İ', 'i', 'I', '-']
    let compared = 0
    let matched = 0
    for (let n = 0; n < 5000; n++) {
      const source = Array.from({ length: 1 + Math.floor(random() * 6) }, () => pick(pieces)).join('')
      /** @type {RegExp} */
      let reference
      try {
        reference = new RegExp(source, 'i')
      } catch {
        continue
      }
      const match = namePattern(`/${source}/i`)
      for (let k = 0; k < 10; k++) {
        const name = Array.from({ length: Math.floor(random() * 6) }, () => pick(chars)).join('')
        const want = reference.test(name)
        assert.equal(match(name), want, `/${source}/i on ${JSON.stringify(name)}`)
        compared++
        if (want) matched++
      }
    }
    assert.ok(compared > 30_000 && matched > 5000, `${compared} cases, ${matched} matching`)
  })

  test('a regex the linear-time engine runs is not catastrophic on a long name', { timeout: 30_000 }, () => {
    // (a+)+$ backtracks 2^n times on a's then b: 2^40 on the ordinary engine.
    const started = performance.now()
    assert.equal(namePattern('/(a+)+$/')(`${'a'.repeat(40)}b`), false)
    assert.equal(namePattern('/(a+)+$/i')(`${'A'.repeat(40)}b`), false)
    assert.equal(namePattern('/^(.*)*\\.(.*)\\.weight$/s')(hostile(320_000)), false)
    assert.ok(performance.now() - started < 2000, `${Math.round(performance.now() - started)} ms`)
  })

  test('a regex the linear-time engine cannot run is refused with InvalidArgument; a bad one is a SyntaxError', () => {
    for (const pattern of ['/(a)\\1/', '/(a)\\1/i', '/a(?=b)/', '/x/u', '/a{17}/', '/\\a/i']) {
      assert.throws(() => namePattern(pattern), (error) => error instanceof SafetensorsError && error.code === 'InvalidArgument' &&
        error.message.startsWith(`${pattern} cannot be matched in linear time`), pattern)
    }
    assert.throws(() => namePattern('/(/'), SyntaxError)
  })
})

describe('convert --only over a hostile name', () => {
  const data = new Float32Array([1])
  /** A file of a hostile name and an ordinary one, in a folder of its own. @param {string} hostileName */
  async function fixture(hostileName) {
    const dir = await mkdtemp(join(tmpdir(), 'name-pattern-'))
    const input = join(dir, 'in.safetensors')
    await writeFile(input, await serialize({ [hostileName]: { dtype: 'F32', shape: [1], data },
      'model.layers.0.mlp.weight': { dtype: 'F32', shape: [1], data } }))
    return { dir, input, output: join(dir, 'out.safetensors') }
  }

  test('a catastrophic /regex/i keeps the matching tensor and exits quickly', { timeout: 60_000 }, async () => {
    const { dir, input, output } = await fixture(`${'a'.repeat(40)}b`)
    try {
      // The ordinary engine takes 2^40 steps on the first name: the old code never returned,
      // and its SIGTERM handler could not run (the 30 s kill did not end it).
      const { stdout } = await promisify(execFile)(process.execPath, [CLI, 'convert', input, output, '--dtype', 'bf16',
        '--only', '/^(?:(a+)+$|MODEL\\.layers\\.\\d+\\.mlp\\.WEIGHT$)/i'], { encoding: 'utf8', timeout: 30_000 })
      assert.match(stdout, /1 tensors \(1 cast to BF16, 0 copied, 1 left out\)/)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  test('a /regex/ the linear engine cannot run is a usage mistake: exit 2, nothing written', { timeout: 60_000 }, async () => {
    const { dir, input, output } = await fixture('aa')
    try {
      const error = await promisify(execFile)(process.execPath, [CLI, 'convert', input, output, '--dtype', 'bf16',
        '--only', '/(a)\\1/'], { encoding: 'utf8', timeout: 30_000 }).then(() => null, (e) => e)
      assert.equal(error?.code, 2, error?.stderr)
      assert.match(error.stderr, /^error: --only \/\(a\)\\1\/: \/\(a\)\\1\/ cannot be matched in linear time/)
      await assert.rejects(open(output), { code: 'NotFound' })
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  test('keeps the matching tensor and exits quickly', { timeout: 60_000 }, async () => {
    const { dir, input, output } = await fixture(hostile(320_000))
    try {
      // The old matcher took minutes on this name: the 30 s limit kills the child then.
      const { stdout } = await promisify(execFile)(process.execPath, [CLI, 'convert', input, output, '--dtype', 'bf16',
        '--only', '*.layers.*.*.weight'], { encoding: 'utf8', timeout: 30_000 })
      assert.match(stdout, /1 tensors \(1 cast to BF16, 0 copied, 1 left out\)/)
      const f = await open(output)
      assert.deepEqual(f.names, ['model.layers.0.mlp.weight'])
      await f.close()
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
