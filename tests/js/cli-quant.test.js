// The CLI on quantized checkpoints (issue 15), run as a user runs it: `node js/cli/main.js ...` in
// a child process, on the fixtures of tests/js/quant-fixtures.js (every scheme, the error files,
// the sharded set), checked against the library itself: inspect lists what f.quantized() finds
// and counts what parameterCount() counts, stats of a logical name is the stats of f.dequantize(),
// convert --dequantize writes f.dequantize() cast to the dtype. Exit codes: 0 done, 1 failure.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { copyFile, mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile as fsWriteFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ShardedFile, castTensor, open, serialize } from '../../js/node.js'
import { FP8_LAYER, sampleModel } from '../fixtures/make-sample.js'
import { formatShape } from '../../js/format.js'
import { dequantizeCheckpoint } from '../../js/cli/convert.js'
import { dequantizedStats, leadingRange, pieces } from '../../js/cli/quant.js'
import { errorFixtures, fixtures, writeFixtures } from './quant-fixtures.js'
import { startServer } from './http-server.js'

const CLI = fileURLToPath(new URL('../../js/cli/main.js', import.meta.url))

/**
 * @param {...string} args
 * @returns {Promise<{ code: number, stdout: string, stderr: string }>}
 */
function run(...args) {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 120_000, maxBuffer: 64 << 20 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(/** @type {any} */ (error).code ?? 1) : 0, stdout, stderr })
    })
  })
}

/** @type {string} */
let dir
const FIXTURES = fixtures()
const ERRORS = errorFixtures()

/** @param {string} name a fixture's name */
const pathOf = (name) => join(dir, `${name}.safetensors`)
/** The --config arguments of a fixture (its config file, when it has one). @param {string} name */
const configArgs = (name) => ('config' in FIXTURES[/** @type {keyof typeof FIXTURES} */ (name)] && /** @type {any} */ (FIXTURES)[name].config ? ['--config', join(dir, `${name}.config.json`)] : [])
/** The library's view of a fixture, opened with its config. @param {string} name */
async function openFixture(name) {
  const config = /** @type {any} */ (FIXTURES)[name].config
  return open(pathOf(name), config ? { quantization: { quantization_config: config } } : {})
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'st-cli-quant-'))
  await writeFixtures(dir)
})

after(async () => {
  await rm(dir, { recursive: true })
})

/** JSON's view of a value (NaN as null), as the CLI's --json prints it. @param {unknown} v */
const asJson = (v) => JSON.parse(JSON.stringify(v))

test('inspect lists each quantized weight by logical name, scheme and logical shape, its parts indented under it', async () => {
  for (const name of Object.keys(FIXTURES)) {
    const fixture = /** @type {any} */ (FIXTURES)[name]
    const r = await run('inspect', pathOf(name), ...configArgs(name))
    assert.equal(r.code, 0, `${name}: ${r.stderr}`)
    assert.equal(r.stderr, '')
    const f = await openFixture(name)
    try {
      const count = f.parameterCount()
      assert.match(r.stdout, new RegExp(`^parameters  ${count.total.toLocaleString('en-US')} \\(`, 'm'), name)
      for (const [scheme, n] of Object.entries(count.byScheme)) assert.ok(r.stdout.includes(`${scheme} ${n.toLocaleString('en-US')}`), `${name}: ${scheme} ${n}`)
      assert.match(r.stdout, new RegExp(`^quantized   ${fixture.weights.length} weights? \\(`, 'm'), name)
      const lines = r.stdout.split('\n')
      for (const w of fixture.weights) {
        const at = lines.findIndex((l) => l.startsWith(`${w.name} `))
        assert.ok(at > 0, `${name}: a row for ${w.name}`)
        assert.match(lines[at], new RegExp(`^${w.name.replace(/\./g, '\\.')}\\s+${w.scheme}\\s+${formatShape(w.shape).replace(/[[\]]/g, '\\$&')}\\s`), name)
        // Its parts follow, indented, each with its role.
        const parts = Object.entries(w.parts)
        const under = lines.slice(at + 1, at + 1 + parts.length)
        for (const [role, stored] of parts) assert.ok(under.some((l) => l.startsWith(`  ${stored} `) && l.trimEnd().endsWith(` ${role}`)), `${name}: part ${role} of ${w.name}`)
      }
      // Plain tensors keep their rows, unindented; no stored tensor is left out.
      for (const p of fixture.plain) assert.ok(lines.some((l) => l.startsWith(`${p} `)), `${name}: ${p}`)
      for (const stored of f.names) assert.ok(lines.some((l) => l.startsWith(`${stored} `) || l.startsWith(`  ${stored} `)), `${name}: ${stored}`)
    } finally {
      await f.close()
    }
  }
})

test('inspect --json: a quantized array equal to f.quantized(), logical parameters, every stored tensor', async () => {
  for (const name of Object.keys(FIXTURES)) {
    const r = await run('inspect', pathOf(name), '--json', ...configArgs(name))
    assert.equal(r.code, 0, `${name}: ${r.stderr}`)
    const doc = JSON.parse(r.stdout)
    const f = await openFixture(name)
    try {
      assert.deepEqual(doc.quantized, asJson(f.quantized()), name)
      assert.deepEqual(doc.parameters, f.parameterCount(), name)
      assert.deepEqual(doc.tensors.map((/** @type {any} */ t) => t.name).sort(), f.names.sort(), name)
      for (const w of /** @type {any} */ (FIXTURES)[name].weights) {
        const q = doc.quantized.find((/** @type {any} */ e) => e.name === w.name)
        assert.ok(q, `${name}: ${w.name}`)
        assert.equal(q.scheme, w.scheme)
        assert.deepEqual(q.shape, w.shape)
        assert.deepEqual(q.parts, w.parts)
      }
    } finally {
      await f.close()
    }
  }
  // A plain file's document has no quantized key (the document of cli.test.js, unchanged).
  const plain = join(dir, 'plain.safetensors')
  const { writeFile } = await import('../../js/node.js')
  await writeFile(plain, { a: { dtype: 'F32', shape: [2], data: new Float32Array([1, 2]) } })
  const r = await run('inspect', plain, '--json')
  assert.equal(r.code, 0, r.stderr)
  assert.equal('quantized' in JSON.parse(r.stdout), false)
})

test('inspect --tree shows each quantized weight once, with its logical parameters', async () => {
  const r = await run('inspect', pathOf('gptq4'), '--tree', '--json', ...configArgs('gptq4'))
  assert.equal(r.code, 0, r.stderr)
  /** @type {any[]} */
  const leaves = []
  const walk = (/** @type {any} */ n) => (n.children ? n.children.forEach(walk) : leaves.push(n))
  walk(JSON.parse(r.stdout))
  const q = leaves.find((l) => l.path === 'model.layers.0.self_attn.q_proj.weight')
  assert.equal(q.dtype, 'gptq')
  assert.equal(q.parameters, 96 * 256)
  assert.equal(leaves.some((l) => /qweight|qzeros|scales|g_idx/.test(l.path)), false)
})

test('inspect of an inconsistent checkpoint: the plain listing, then the error with its code on stderr, exit 1', async () => {
  for (const [name, e] of Object.entries(ERRORS)) {
    const r = await run('inspect', pathOf(name))
    const f = await open(pathOf(name))
    try {
      for (const stored of f.names) assert.ok(r.stdout.split('\n').some((l) => l.startsWith(`${stored} `) || l.startsWith(`  ${stored} `)), `${name}: ${stored} listed`)
    } finally {
      await f.close()
    }
    if (e.inQuantized) {
      // Found consistent by quantized(); the problem shows when it is read.
      assert.equal(r.code, 0, `${name}: ${r.stderr}`)
      const s = await run('stats', pathOf(name), e.weight)
      assert.equal(s.code, 1, name)
      assert.match(s.stderr, new RegExp(`^error: ${e.code} \\(tensor "${e.weight.replace(/\./g, '\\.')}"\\)`), name)
      continue
    }
    assert.equal(r.code, 1, name)
    assert.match(r.stdout, /^quantized {3}unreadable/m, name)
    assert.match(r.stderr, new RegExp(`^error: ${e.code} \\(tensor "${e.weight.replace(/\./g, '\\.')}"\\): `), name)
    const j = await run('inspect', pathOf(name), '--json')
    assert.equal(j.code, 1, name)
    const doc = JSON.parse(j.stdout)
    assert.equal(doc.quantizedError.code, e.code)
    assert.equal(doc.quantizedError.tensor, e.weight)
    assert.equal('quantized' in doc, false)
  }
})

test('a config that disagrees with the tensors: QuantConfigMismatch, exit 1, in inspect, stats and convert', async () => {
  const wrong = join(dir, 'gptq8.config.json')  // 8 bits, group 32: gptq4 holds 4 bits, group 64
  const inspect = await run('inspect', pathOf('gptq4'), '--config', wrong)
  assert.equal(inspect.code, 1)
  assert.match(inspect.stderr, /^error: QuantConfigMismatch \(tensor "model\.layers\.0\.self_attn\.[a-z_]+\.weight"\): /)
  const stats = await run('stats', pathOf('gptq4'), 'model.layers.0.self_attn.k_proj.weight', '--config', wrong)
  assert.equal(stats.code, 1)
  assert.match(stats.stderr, /^error: QuantConfigMismatch /)
  const convert = await run('convert', pathOf('gptq4'), join(dir, 'never.safetensors'), '--dequantize', '--dtype', 'bf16', '--config', wrong)
  assert.equal(convert.code, 1)
  assert.match(convert.stderr, /^error: QuantConfigMismatch /)
  await assert.rejects(stat(join(dir, 'never.safetensors')))

  // The config.json beside a file is read when there is one; --no-config leaves it out.
  const folder = join(dir, 'with-config')
  await mkdir(folder)
  await copyFile(pathOf('gptq4'), join(folder, 'model.safetensors'))
  await copyFile(wrong, join(folder, 'config.json'))
  const beside = await run('inspect', join(folder, 'model.safetensors'))
  assert.equal(beside.code, 1)
  assert.match(beside.stderr, /^error: QuantConfigMismatch /)
  assert.equal((await run('inspect', join(folder, 'model.safetensors'), '--no-config')).code, 0)
  await copyFile(join(dir, 'gptq4.config.json'), join(folder, 'config.json'))
  const right = await run('inspect', join(folder, 'model.safetensors'))
  assert.equal(right.code, 0, right.stderr)
  assert.match(right.stdout, /^quantized {3}2 weights \(gptq 2\), config .*config\.json$/m)

  // An unreadable --config: exit 1 naming it; --config with --no-config: a usage mistake.
  const missing = await run('inspect', pathOf('gptq4'), '--config', join(dir, 'none.json'))
  assert.equal(missing.code, 1)
  assert.match(missing.stderr, /^error: NotFound: --config /)
  await fsWriteFile(join(dir, 'bad.json'), '{ not json')
  assert.match((await run('inspect', pathOf('gptq4'), '--config', join(dir, 'bad.json'))).stderr, /^error: InvalidArgument: --config .* is not JSON/)
  assert.equal((await run('inspect', pathOf('gptq4'), '--config', wrong, '--no-config')).code, 2)
})

test('stats of a logical name: the statistics of f.dequantize(), every scheme', async () => {
  for (const name of Object.keys(FIXTURES)) {
    const weights = /** @type {any} */ (FIXTURES)[name].weights.map((/** @type {any} */ w) => w.name)
    const r = await run('stats', pathOf(name), ...weights, '--bins', '7', '--json', ...configArgs(name))
    assert.equal(r.code, 0, `${name}: ${r.stderr}`)
    const doc = JSON.parse(r.stdout)
    const f = await openFixture(name)
    try {
      for (const [i, w] of weights.entries()) {
        const q = f.quantized().find((e) => e.name === w)
        const t = await f.dequantize(w)
        try {
          const got = doc.tensors[i]
          assert.equal(got.name, w)
          assert.equal(got.scheme, q?.scheme)
          assert.equal(got.dtype, 'F32')
          assert.deepEqual(got.shape, [...t.shape])
          assert.deepEqual({ ...got, name: undefined, scheme: undefined, dtype: undefined, shape: undefined, byteLength: undefined, storedByteLength: undefined },
            { ...asJson(t.stats({ bins: 7 })), name: undefined, scheme: undefined, dtype: undefined, shape: undefined, byteLength: undefined, storedByteLength: undefined }, `${name}: ${w}`)
          const stored = Object.values(/** @type {Record<string, string>} */ (q?.parts)).reduce((n, p) => n + f.info(p).byteLength, 0)
          assert.equal(got.storedByteLength, stored)
        } finally {
          t.dispose()
        }
      }
    } finally {
      await f.close()
    }
  }
  // The text form names the scheme; --raw reads the stored tensor as it is.
  const text = await run('stats', pathOf('fp8'), 'model.layers.0.mlp.down_proj.weight')
  assert.equal(text.code, 0, text.stderr)
  assert.match(text.stdout, /^model\.layers\.0\.mlp\.down_proj\.weight {2}fp8-block, dequantized to F32 \[300, 200\] {2}60,000 values, /)
  const raw = await run('stats', pathOf('fp8'), 'model.layers.0.mlp.down_proj.weight', '--raw', '--json')
  assert.equal(JSON.parse(raw.stdout).tensors[0].dtype, 'F8_E4M3')
})

test('the bundled sample: inspect lists its FP8 layer as fp8, stats shows its real values (no config needed)', async () => {
  const sample = sampleModel()
  const path = join(dir, 'sample.safetensors')
  await fsWriteFile(path, await serialize(sample.tensors, { metadata: sample.metadata }))
  const name = `model.layers.${FP8_LAYER}.mlp.down_proj.weight`
  const shape = [sample.config.hidden_size, sample.config.intermediate_size]
  const r = await run('inspect', path)
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stdout, /^quantized {3}1 weight \(/m)
  assert.match(r.stdout, new RegExp(`^${name.replace(/\./g, '\\.')}\\s+fp8\\s+\\[${shape.join(', ')}\\]\\s`, 'm'))
  const stats = await run('stats', path, name, '--json')
  assert.equal(stats.code, 0, stats.stderr)
  const got = JSON.parse(stats.stdout).tensors[0]
  assert.equal(got.scheme, 'fp8')
  let maxAbs = 0
  for (const v of sample.fp8Source) maxAbs = Math.max(maxAbs, Math.abs(v))
  // the largest code, 448, times the scale maxAbs / 448: the source's largest value, not 448
  assert.ok(Math.abs(Math.max(-got.min, got.max) - maxAbs) <= maxAbs * 1e-6, `${got.min}..${got.max}, source amax ${maxAbs}`)
})

test('stats --slice of a quantized weight: rows of its leading dimension, as dequantize({ slice })', async () => {
  for (const [name, weight, spec, range] of [['fp8', 'model.layers.0.mlp.down_proj.weight', '100:290', [100, 290]],
    ['mxfp4', 'model.layers.0.mlp.experts.gate_up_proj', '-2:', [2, 4]], ['bnb-nf4-nested', 'model.layers.0.mlp.up_proj.weight', '7', [7, 8]]]) {
    const r = await run('stats', pathOf(name), /** @type {string} */ (weight), `--slice=${spec}`, '--json', ...configArgs(/** @type {string} */ (name)))
    assert.equal(r.code, 0, r.stderr)
    const got = JSON.parse(r.stdout).tensors[0]
    const f = await openFixture(/** @type {string} */ (name))
    const t = await f.dequantize(/** @type {string} */ (weight), { slice: /** @type {[number, number]} */ (range) })
    try {
      assert.deepEqual(got.shape, [...t.shape])
      assert.equal(got.slice, spec)
      assert.deepEqual(got.histogram, asJson(t.stats({ bins: 20 }).histogram))
      assert.equal(got.mean, asJson(t.stats().mean))
    } finally {
      t.dispose()
      await f.close()
    }
  }
  const bad = await run('stats', pathOf('fp8'), 'model.layers.0.mlp.down_proj.weight', '--slice', '0:2, 3:4')
  assert.equal(bad.code, 1)
  assert.match(bad.stderr, /^error: InvalidSlice /)
})

test('stats of a weight larger than a piece: read in pieces of rows, combined (counts, min, max, histogram exact)', async () => {
  assert.deepEqual(leadingRange('2:-1', 10, 'w'), [2, 9])
  assert.deepEqual(leadingRange(':', 10, 'w'), [0, 10])
  assert.deepEqual(leadingRange('-1', 10, 'w'), [9, 10])
  for (const [name, weight] of [['fp8', 'model.layers.0.mlp.down_proj.weight'], ['mxfp4', 'model.layers.0.mlp.experts.gate_up_proj'],
    ['nvfp4-ct', 'model.layers.0.mlp.gate_proj.weight'], ['ct-pack', 'model.layers.0.self_attn.o_proj.weight'], ['awq-odd', 'model.layers.0.mlp.down_proj.weight']]) {
    const f = await openFixture(name)
    try {
      const q = /** @type {any} */ (f.quantized().find((e) => e.name === weight))
      const maxElements = 3 * q.shape.slice(1).reduce((a, b) => a * b, 1)  // three rows a piece
      assert.ok(pieces(q, { maxElements }).length > 1)
      const pieced = await dequantizedStats(f, q, { bins: 9, maxElements })
      const t = await f.dequantize(weight)
      try {
        const whole = t.stats({ bins: 9 })
        for (const k of /** @type {const} */ (['count', 'finiteCount', 'nanCount', 'infCount', 'zeroCount', 'min', 'max']))
          assert.equal(pieced[k], whole[k], `${name} ${k}`)
        assert.deepEqual(pieced.histogram, whole.histogram, name)
        // Merged in another order: equal up to double rounding, relative to the values' range.
        const range = Math.max(Math.abs(whole.min), Math.abs(whole.max))
        assert.ok(Math.abs(pieced.mean - whole.mean) <= 1e-12 * range, `${name} mean ${pieced.mean} ${whole.mean}`)
        assert.ok(Math.abs(pieced.std - whole.std) <= 1e-9 * whole.std, `${name} std ${pieced.std} ${whole.std}`)
      } finally {
        t.dispose()
      }
    } finally {
      await f.close()
    }
  }
})

/**
 * Checks a dequantized checkpoint against its input: each quantized weight under its logical
 * name equal to dequantize() cast to dtype, no part left, plain tensors as they were.
 * @param {import('../../js/node.js').SafetensorsFile | ShardedFile} input
 * @param {import('../../js/node.js').SafetensorsFile | ShardedFile} output
 * @param {'BF16' | 'F16' | 'F32'} dtype
 * @param {string} label
 */
async function sameAsDequantized(input, output, dtype, label) {
  const quantized = await input.quantized()
  const logical = new Set(quantized.map((q) => q.name))
  const parts = new Set(quantized.flatMap((q) => Object.values(q.parts)).filter((p) => !logical.has(p)))
  const plain = input.names.filter((n) => !parts.has(n) && !logical.has(n))
  assert.deepEqual([...output.names].sort(), [...logical, ...plain].sort(), label)
  assert.deepEqual(await output.quantized(), [], `${label}: nothing quantized is left`)
  for (const q of quantized) {
    const info = await output.info(q.name)
    assert.equal(info.dtype, dtype)
    assert.deepEqual(info.shape, q.shape)
    const t = await input.dequantize(q.name)
    const got = await output.tensor(q.name)
    try {
      const want = await castTensor(t, dtype)
      assert.deepEqual(Buffer.from(got.bytes), Buffer.from(want.data.buffer, want.data.byteOffset, want.data.byteLength), `${label}: ${q.name}`)
    } finally {
      t.dispose()
      got.dispose()
    }
  }
  for (const name of plain) {
    const a = await input.tensor(name)
    const b = await output.tensor(name)
    try {
      assert.equal(b.dtype, a.dtype)
      assert.deepEqual(Buffer.from(b.bytes), Buffer.from(a.bytes), `${label}: ${name}`)
    } finally {
      a.dispose()
      b.dispose()
    }
  }
}

test('convert --dequantize: a plain checkpoint equal to dequantize() cast to the dtype, every scheme', async () => {
  for (const name of Object.keys(FIXTURES)) {
    for (const [flag, dtype] of /** @type {const} */ ([['bf16', 'BF16'], ['f32', 'F32'], ['f16', 'F16']])) {
      if (dtype !== 'BF16' && !['fp8', 'mxfp4', 'gptq4', 'bnb-nf4-nested'].includes(name)) continue
      const out = join(dir, `${name}.${flag}.safetensors`)
      const r = await run('convert', pathOf(name), out, '--dequantize', '--dtype', flag, ...configArgs(name))
      assert.equal(r.code, 0, `${name}: ${r.stderr}`)
      const n = /** @type {any} */ (FIXTURES)[name].weights.length
      assert.match(r.stdout, new RegExp(`: \\d+ tensors \\(${n} quantized weights? dequantized to ${dtype} from their \\d+ stored parts, \\d+ copied\\), \\d+ bytes\\n$`))
      const input = await openFixture(name)
      const output = await open(out)
      try {
        await sameAsDequantized(input, output, dtype, `${name} ${flag}`)
        assert.deepEqual(output.metadata, input.metadata)
      } finally {
        await input.close()
        await output.close()
      }
    }
  }
})

test('convert --dequantize reads big weights in pieces and refuses to write over its input', async () => {
  const out = join(dir, 'pieces.safetensors')
  const r = await dequantizeCheckpoint(pathOf('fp8'), out, { dtype: 'F32', maxElements: 1000, openOptions: { quantization: { quantization_config: FIXTURES.fp8.config } } })
  assert.equal(r.dequantized, 2)
  const input = await openFixture('fp8')
  const output = await open(out)
  try {
    await sameAsDequantized(input, output, 'F32', 'pieces')
  } finally {
    await input.close()
    await output.close()
  }
  const over = await run('convert', pathOf('fp8'), pathOf('fp8'), '--dequantize', '--dtype', 'bf16')
  assert.equal(over.code, 1)
  assert.match(over.stderr, /^error: InvalidArgument: .* is the input file/)
  const usage = await run('convert', pathOf('fp8'), out, '--dequantize')
  assert.equal(usage.code, 2)
})

test('convert --dequantize of a sharded set: a new set with its own index, shards no larger than the input\'s', async () => {
  const index = join(dir, 'sharded', 'model.safetensors.index.json')
  const outDir = join(dir, 'dequantized-set')
  const r = await run('convert', index, outDir, '--dequantize', '--dtype', 'bf16', '--json')
  assert.equal(r.code, 0, r.stderr)
  const summary = JSON.parse(r.stdout)
  const written = JSON.parse(await readFile(join(outDir, 'model.safetensors.index.json'), 'utf8'))
  assert.equal(summary.index, join(outDir, 'model.safetensors.index.json'))
  assert.deepEqual([...new Set(Object.values(written.weight_map))].sort(), [...summary.shards].sort())
  assert.deepEqual((await readdir(outDir)).sort(), [...summary.shards, 'model.safetensors.index.json'].sort())
  // The index is right: each shard holds exactly what it maps there, total_size is their bytes.
  let total = 0
  const limit = Math.max(...await Promise.all(['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors']
    .map(async (s) => (await stat(join(dir, 'sharded', s))).size)))
  for (const shard of summary.shards) {
    assert.match(shard, /^model-\d{5}-of-\d{5}\.safetensors$/)
    const f = await open(join(outDir, shard))
    try {
      assert.deepEqual([...f.names].sort(), Object.keys(written.weight_map).filter((n) => written.weight_map[n] === shard).sort())
      const bytes = f.names.reduce((n, name) => n + f.info(name).byteLength, 0)
      total += bytes
      assert.ok(bytes <= limit || f.names.length === 1, `${shard}: ${bytes} bytes, the limit ${limit}`)
    } finally {
      await f.close()
    }
  }
  assert.equal(written.metadata.total_size, total)
  assert.ok(summary.shards.length > 1)
  const input = await open(index)
  const output = await open(summary.index)
  try {
    assert.ok(input instanceof ShardedFile && output instanceof ShardedFile)
    await sameAsDequantized(input, output, 'BF16', 'sharded')
  } finally {
    await input.close()
    await output.close()
  }
  // An index path names the output; writing over the input set is refused.
  const named = join(dir, 'named', 'dq.safetensors.index.json')
  const n = await run('convert', index, named, '--dequantize', '--dtype', 'f16', '--json')
  assert.equal(n.code, 0, n.stderr)
  assert.ok(JSON.parse(n.stdout).shards.every((/** @type {string} */ s) => /^dq-\d{5}-of-\d{5}\.safetensors$/.test(s)))
  const over = await run('convert', index, join(dir, 'sharded'), '--dequantize', '--dtype', 'bf16')
  assert.equal(over.code, 1)
  assert.match(over.stderr, /^error: InvalidArgument: .* is a file of the input set/)
  const file = await run('convert', index, join(dir, 'x.safetensors'), '--dequantize', '--dtype', 'bf16')
  assert.equal(file.code, 1)
  assert.match(file.stderr, /a folder or a \*\.index\.json path/)
})

test('convert --dequantize of a sharded set over HTTP: the same set as from the files, the copies read ahead', async () => {
  const server = await startServer({ lifetime: 120_000 })
  try {
    for (const file of await readdir(join(dir, 'sharded'))) server.addFile(`/q/${file}`, await readFile(join(dir, 'sharded', file)))
    server.setLatency(10)
    const outDir = join(dir, 'dequantized-over-http')
    const r = await run('convert', server.url('/q/model.safetensors.index.json'), outDir, '--dequantize', '--dtype', 'bf16')
    assert.equal(r.code, 0, r.stderr)
    const input = await open(join(dir, 'sharded', 'model.safetensors.index.json'))
    const output = await open(join(outDir, 'model.safetensors.index.json'))
    try {
      await sameAsDequantized(input, output, 'BF16', 'over HTTP')
    } finally {
      await input.close()
      await output.close()
    }
  } finally {
    await server.close()
  }
})

test('convert without --dequantize copies the parts of quantized weights as they are (scales are not cast)', async () => {
  const out = join(dir, 'cast.safetensors')
  const r = await run('convert', pathOf('fp8'), out, '--dtype', 'f16')
  assert.equal(r.code, 0, r.stderr)
  const f = await open(out)
  try {
    assert.equal(f.info('model.layers.0.mlp.down_proj.weight_scale_inv').dtype, 'F32')
    assert.equal(f.info('model.norm.weight').dtype, 'F16')
    assert.equal(f.quantized().length, 2)
  } finally {
    await f.close()
  }
})
