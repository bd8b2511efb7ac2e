// The package's types as projects that install it see them, compiled with the TypeScript compiler
// (the `typescript` dev dependency):
// - tests/types/<project>/ (a tsconfig and a module) is copied into a folder of its own whose
//   node_modules links this package by name (and @types/node), as an install would, then
//   compiled: `bundler` (moduleResolution bundler, which ignores the "node" export condition:
//   the Node-only exports come from safetensors-wasm/node), `node-no-dom` (lib es2022 and
//   @types/node only, skipLibCheck off: nothing needs the DOM lib; no Float16Array in the data
//   types) and `float16` (the esnext.float16 lib: Float16Array in them);
// - tests/types/options.ts is compiled with its `@ts-expect-error misspelt: <name>` comments taken
//   out: each line they marked must fail, for that misspelt option, and no other line.
import assert from 'node:assert/strict'
import { cp, mkdir, mkdtemp, rm, symlink } from 'node:fs/promises'
import { readFileSync, realpathSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const ROOT = realpathSync(fileURLToPath(new URL('../../', import.meta.url)))
/** @type {string[]} */
const folders = []

after(async () => {
  for (const folder of folders) await rm(folder, { recursive: true, force: true })
})

/** @param {readonly ts.Diagnostic[]} diagnostics */
function describe(diagnostics) {
  return diagnostics.map((d) => {
    const text = ts.flattenDiagnosticMessageText(d.messageText, '\n')
    if (!d.file || d.start === undefined) return `TS${d.code}: ${text}`
    const { line, character } = d.file.getLineAndCharacterOfPosition(d.start)
    return `${d.file.fileName}:${line + 1}:${character + 1} TS${d.code}: ${text}`
  }).join('\n')
}

/**
 * Compiles tests/types/<name>/ as an installed package's user: its files in a temporary folder,
 * node_modules/safetensors-wasm a link to this package, node_modules/@types/node a link to ours.
 * @param {string} name
 * @returns {Promise<{ program: ts.Program, diagnostics: readonly ts.Diagnostic[], files: string[] }>}
 */
async function compileProject(name) {
  const folder = await mkdtemp(join(tmpdir(), `types-${name}-`))
  folders.push(folder)
  await cp(join(ROOT, 'tests', 'types', name), folder, { recursive: true })
  await mkdir(join(folder, 'node_modules', '@types'), { recursive: true })
  await symlink(ROOT, join(folder, 'node_modules', 'safetensors-wasm'), 'dir')
  await symlink(join(ROOT, 'node_modules', '@types', 'node'), join(folder, 'node_modules', '@types', 'node'), 'dir')
  const config = ts.getParsedCommandLineOfConfigFile(join(folder, 'tsconfig.json'), {}, {
    ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => assert.fail(describe([d])),
  })
  assert.ok(config, `${name}/tsconfig.json`)
  assert.deepEqual(config.errors, [], describe(config.errors))
  const program = ts.createProgram({ rootNames: config.fileNames, options: config.options })
  const files = program.getSourceFiles().map((f) => f.fileName)
  return { program, diagnostics: ts.getPreEmitDiagnostics(program), files }
}

test('moduleResolution bundler: the Node-only exports are typed through safetensors-wasm/node', async () => {
  const { program, diagnostics, files } = await compileProject('bundler')
  assert.equal(program.getCompilerOptions().moduleResolution, ts.ModuleResolutionKind.Bundler)
  assert.equal(describe(diagnostics), '')
  // The bare name resolved to the browser entry's types, the subpath to the Node entry's.
  assert.ok(files.includes(join(ROOT, 'js', 'index.d.ts')), files.join('\n'))
  assert.ok(files.includes(join(ROOT, 'js', 'node.d.ts')), files.join('\n'))
  // And Node runs what the types describe: the subpath is the Node entry.
  const [sub, node] = await Promise.all([import('safetensors-wasm/node'), import('../../js/node.js')])
  assert.equal(sub.writeFile, node.writeFile)
  assert.equal(sub.open, node.open)
})

test('a Node project without the DOM lib compiles, skipLibCheck off', async () => {
  const { program, diagnostics, files } = await compileProject('node-no-dom')
  assert.deepEqual(program.getCompilerOptions().lib, ['lib.es2022.d.ts'])
  assert.equal(program.getCompilerOptions().skipLibCheck, false)
  assert.ok(!files.some((f) => /lib\.dom/.test(f)), 'no DOM lib in the program')
  assert.ok(files.includes(join(ROOT, 'js', 'node.d.ts')), 'the package was compiled')
  assert.equal(describe(diagnostics), '')
})

test('Float16Array is in the data types when the lib declares it', async () => {
  const { diagnostics, files } = await compileProject('float16')
  assert.ok(files.some((f) => f.endsWith('lib.esnext.float16.d.ts')), 'the esnext.float16 lib is in the program')
  assert.equal(describe(diagnostics), '')
})

test('a misspelt option fails to compile, for its name, on every line options.ts marks', () => {
  const path = join(ROOT, 'tests', 'types', 'options.ts')
  const text = readFileSync(path, 'utf8')
  const lines = text.split('\n')
  /** @type {Map<number, string>} 0-based line of the call -> the misspelt name */
  const marked = new Map()
  const directive = (/** @type {string} */ line) => line.trim().startsWith('// @ts-expect-error')
  lines.forEach((line, i) => {
    if (!directive(line)) return
    const m = /^\s*\/\/ @ts-expect-error misspelt: (\w+)$/.exec(line)
    assert.ok(m, `options.ts:${i + 1}: each expected error names its misspelling`)
    marked.set(i + 1, m[1])
  })
  assert.ok(marked.size >= 30, `only ${marked.size} misspellings: the walk broke`)
  // The comments blanked out (lines keep their numbers), compiled as tests/tsconfig.json does.
  const stripped = lines.map((line) => (directive(line) ? '' : line)).join('\n')
  const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tests', 'tsconfig.json'), {}, {
    ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => assert.fail(describe([d])),
  })
  assert.ok(config)
  const options = { ...config.options, allowJs: false, checkJs: false }
  const host = ts.createCompilerHost(options)
  const getSourceFile = host.getSourceFile.bind(host)
  host.getSourceFile = (fileName, language, ...rest) => (fileName === path
    ? ts.createSourceFile(fileName, stripped, language)
    : getSourceFile(fileName, language, ...rest))
  const program = ts.createProgram({ rootNames: [path], options, host })
  const diagnostics = ts.getPreEmitDiagnostics(program)
  /** @type {Map<number, string[]>} */
  const found = new Map()
  for (const d of diagnostics) {
    assert.ok(d.file?.fileName === path && d.start !== undefined, `an error outside options.ts:\n${describe([d])}`)
    const line = d.file.getLineAndCharacterOfPosition(d.start).line
    found.set(line, [...(found.get(line) ?? []), ts.flattenDiagnosticMessageText(d.messageText, '\n')])
  }
  for (const [line, messages] of found) {
    assert.ok(marked.has(line), `options.ts:${line + 1} fails but is not marked:\n${messages.join('\n')}`)
  }
  for (const [line, name] of marked) {
    const messages = found.get(line)
    assert.ok(messages, `options.ts:${line + 1}: the misspelt ${name} compiles`)
    for (const message of messages) {
      assert.ok(message.includes(`'${name}' does not exist in type`), `options.ts:${line + 1} fails for another reason:\n${message}`)
    }
  }
})
