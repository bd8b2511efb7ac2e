// The hand-written types (js/index.d.ts, js/node.d.ts) against the code they describe, so that
// neither drifts from the other unnoticed:
// - every runtime export of js/index.js and js/node.js is typed, with the right kind (class,
//   function, constant), and every value the .d.ts declares exists at run time;
// - each class's public members (prototype methods and getters, fields set by the constructor)
//   are exactly the declared ones, methods as methods and the rest as properties;
// - what the API returns (the byte sources, info(), stats(), awkward nodes) has exactly the
//   members its interface declares;
// - no function or method takes more parameters than its declaration, and every option the
//   code's JSDoc names (parameters `options` and `details`) is declared;
// - the `ErrorCode` and `Dtype` unions list exactly ERROR_CODES and DTYPES;
// - tests/types/usage.ts (compiled by tsc --strict) imports every name the .d.ts files export.
// The .d.ts are read with the TypeScript compiler (the `typescript` dev dependency).
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import * as browserEntry from '../../js/index.js'
import * as nodeEntry from '../../js/node.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const at = (/** @type {string} */ path) => ROOT + path

// One program holds both sides: the .d.ts files and the JS (checkJs reads its JSDoc). An import
// of './index.js' resolves to index.d.ts, so the JS side of a re-export is followed through the
// implementation modules (file.js, sharded.js, ...), which have no .d.ts of their own.
const program = ts.createProgram([at('js/index.d.ts'), at('js/node.d.ts'), at('js/index.js'), at('js/node.js')], {
  allowJs: true, checkJs: true, noEmit: true, strict: true, skipLibCheck: true,
  target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext,
  lib: ['lib.es2022.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts', 'lib.esnext.disposable.d.ts'], types: ['node'],
})
const checker = program.getTypeChecker()

/** @param {ts.Symbol} symbol */
const resolved = (symbol) => (symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol)

/** The module's exports by name, aliases followed to their declarations. @param {string} path */
function exportsOf(path) {
  const file = program.getSourceFile(at(path))
  assert.ok(file, `${path} is not in the program`)
  const module = checker.getSymbolAtLocation(file)
  assert.ok(module, `${path} is not a module`)
  return new Map(checker.getExportsOfModule(module).map((s) => [s.name, resolved(s)]))
}

/** @param {ts.Symbol} symbol @returns {'class' | 'function' | 'constant' | 'type'} */
function kindOf(symbol) {
  if (symbol.flags & ts.SymbolFlags.Class) return 'class'
  if (symbol.flags & ts.SymbolFlags.Function) return 'function'
  if (symbol.flags & ts.SymbolFlags.Variable) return 'constant'
  return 'type'
}

/** @param {unknown} value @returns {'class' | 'function' | 'constant'} */
function runtimeKind(value) {
  if (typeof value !== 'function') return 'constant'
  return /^class\b/.test(Function.prototype.toString.call(value)) ? 'class' : 'function'
}

const ENTRIES = [
  { name: 'browser entry', js: 'js/index.js', dts: 'js/index.d.ts', runtime: browserEntry },
  { name: 'Node entry', js: 'js/node.js', dts: 'js/node.d.ts', runtime: nodeEntry },
]

test('every runtime export is typed with its kind, and every typed value exists at run time', () => {
  for (const entry of ENTRIES) {
    const typed = exportsOf(entry.dts)
    const values = [...typed].filter(([, s]) => kindOf(s) !== 'type').map(([name]) => name).sort()
    const runtime = Object.keys(entry.runtime).sort()
    const untyped = runtime.filter((n) => !typed.has(n))
    const missing = values.filter((n) => !(n in entry.runtime))
    assert.deepEqual(untyped, [], `${entry.js} exports what ${entry.dts} does not declare`)
    assert.deepEqual(missing, [], `${entry.dts} declares values ${entry.js} does not export`)
    for (const name of runtime) {
      const declared = kindOf(/** @type {ts.Symbol} */ (typed.get(name)))
      const actual = runtimeKind(/** @type {Record<string, unknown>} */ (entry.runtime)[name])
      assert.equal(declared, actual, `${entry.dts}: ${name} is declared a ${declared} but is a ${actual}`)
    }
  }
  // The browser entry declares nothing Node-only.
  const nodeOnly = Object.keys(nodeEntry).filter((n) => !(n in browserEntry))
  assert.deepEqual(nodeOnly.filter((n) => exportsOf('js/index.d.ts').has(n)), [])
})

/**
 * A member's name as the .d.ts writes it: `[Symbol.dispose]` as 'Symbol.dispose'.
 * @param {ts.PropertyName} name
 */
function memberName(name) {
  if (ts.isComputedPropertyName(name)) return name.expression.getText()
  return name.getText().replace(/^['"]|['"]$/g, '')
}

/** @param {string | symbol} key */
function runtimeName(key) {
  if (typeof key === 'string') return key
  for (const well of /** @type {const} */ (['dispose', 'asyncDispose', 'iterator', 'asyncIterator'])) {
    if (key === Symbol[well] || key === Symbol.for(`Symbol.${well}`)) return `Symbol.${well}`
  }
  return String(key)
}

/**
 * The members a class declares itself (not those it inherits), with their kinds and, for
 * methods, the most parameters any overload takes.
 * @param {string} name a class exported by index.d.ts
 * @returns {Map<string, { kind: 'method' | 'property', parameters: number }>}
 */
function declaredMembers(name) {
  const symbol = exportsOf('js/index.d.ts').get(name)
  const node = symbol?.declarations?.find(ts.isClassDeclaration)
  assert.ok(node, `index.d.ts declares no class ${name}`)
  /** @type {Map<string, { kind: 'method' | 'property', parameters: number }>} */
  const members = new Map()
  for (const member of node.members) {
    if (ts.isConstructorDeclaration(member) || !member.name) continue
    const key = memberName(member.name)
    if (ts.isMethodDeclaration(member)) {
      const before = members.get(key)?.parameters ?? 0
      members.set(key, { kind: 'method', parameters: Math.max(before, member.parameters.length) })
    } else {
      members.set(key, { kind: 'property', parameters: 0 })
    }
  }
  return members
}

/**
 * What an instance has at run time: its class's prototype methods and getters, and the fields
 * its constructor set. Error's own (message, stack, name) are Error's, declared by lib.d.ts.
 * @param {object} instance
 * @returns {Map<string, { kind: 'method' | 'property', length: number }>}
 */
function runtimeMembers(instance) {
  const proto = Object.getPrototypeOf(instance)
  /** @type {Map<string, { kind: 'method' | 'property', length: number }>} */
  const members = new Map()
  // Well-known symbols (Symbol.asyncDispose...) are API; the package's own symbols (PARTS,
  // READ_RANGES, RAW_CHUNKS in js/file.js) are internal, out of reach from the entries.
  const wellKnown = new Set(Object.getOwnPropertyNames(Symbol).map((n) => /** @type {any} */ (Symbol)[n]))
  for (const key of Reflect.ownKeys(proto)) {
    if (key === 'constructor' || (typeof key === 'symbol' && !wellKnown.has(key))) continue
    const d = /** @type {PropertyDescriptor} */ (Object.getOwnPropertyDescriptor(proto, key))
    const method = typeof d.value === 'function'
    members.set(runtimeName(key), { kind: method ? 'method' : 'property', length: method ? d.value.length : 0 })
  }
  for (const key of Object.keys(instance)) {
    if (instance instanceof Error && ['name', 'message', 'stack', 'cause'].includes(key)) continue
    members.set(key, { kind: 'property', length: 0 })
  }
  return members
}

test('each class has exactly the declared public members, of the declared kinds', async () => {
  const { AwkwardArray, SafetensorsError, SafetensorsFile, ShardedFile, Tensor, open, serialize, serializeAwkward } = nodeEntry
  const bytes = await serialize({ w: { dtype: 'F32', shape: [2, 2], data: new Float32Array(4) } }, { metadata: { a: 'b' } })
  const file = await open(bytes)
  const tensor = await file.tensor('w')
  const index = new TextEncoder().encode(JSON.stringify({ metadata: {}, weight_map: { w: 'shard.safetensors' } }))
  const sharded = await open(index, { shards: { 'shard.safetensors': bytes } })
  const awkwardFile = await open(await serializeAwkward([[1, 2], [3]]))
  const awkward = await awkwardFile.awkward()
  const error = new SafetensorsError('InvalidArgument', 'a test', { status: 400, body: 'no', tensor: 'w', offset: 8 })
  const instances = { SafetensorsFile: file, ShardedFile: sharded, Tensor: tensor, AwkwardArray: awkward, SafetensorsError: error }
  const classes = { SafetensorsFile, ShardedFile, Tensor, AwkwardArray, SafetensorsError }
  // Every class the entries export is covered here.
  assert.deepEqual(Object.keys(nodeEntry).filter((n) => runtimeKind(/** @type {any} */ (nodeEntry)[n]) === 'class').sort(),
    Object.keys(classes).sort())
  try {
    for (const [name, instance] of Object.entries(instances)) {
      assert.ok(instance instanceof /** @type {any} */ (classes)[name], name)
      const declared = declaredMembers(name)
      const actual = runtimeMembers(instance)
      assert.deepEqual([...actual.keys()].filter((k) => !declared.has(k)).sort(), [], `${name}: members index.d.ts does not declare`)
      assert.deepEqual([...declared.keys()].filter((k) => !actual.has(k)).sort(), [], `${name}: declared members the code lacks`)
      for (const [key, { kind, length }] of actual) {
        const d = /** @type {{ kind: string, parameters: number }} */ (declared.get(key))
        assert.equal(d.kind, kind, `${name}.${key} is declared a ${d.kind} but is a ${kind}`)
        assert.ok(length <= d.parameters, `${name}.${key} takes ${length} parameters, its declaration ${d.parameters}`)
      }
    }
  } finally {
    tensor.dispose()
    awkward.dispose()
    await Promise.all([file.close(), sharded.close(), awkwardFile.close()])
  }
})

test('no exported function takes more parameters than its declaration', () => {
  for (const entry of ENTRIES) {
    const typed = exportsOf(entry.dts)
    for (const [name, value] of Object.entries(entry.runtime)) {
      if (runtimeKind(value) !== 'function' || !typed.has(name)) continue  // untyped: the first test says so
      const declarations = /** @type {ts.Symbol} */ (typed.get(name)).declarations ?? []
      const most = Math.max(...declarations.filter(ts.isFunctionDeclaration).map((d) => d.parameters.length))
      assert.ok(value.length <= most, `${entry.js}: ${name} takes ${value.length} parameters, ${entry.dts} ${most}`)
    }
  }
})

/**
 * The members of an interface exported by index.d.ts, its bases' included.
 * @param {string} name
 * @returns {Map<string, { optional: boolean }>}
 */
function interfaceMembers(name) {
  const type = checker.getDeclaredTypeOfSymbol(/** @type {ts.Symbol} */ (exportsOf('js/index.d.ts').get(name)))
  return new Map(type.getProperties().map((p) => [p.name, { optional: (p.flags & ts.SymbolFlags.Optional) !== 0 }]))
}

/**
 * Fails unless `value` has only members the interface declares and every member it requires.
 * @param {object} value @param {string} type an interface of index.d.ts @param {string} where
 */
function assertMembers(value, type, where) {
  const declared = interfaceMembers(type)
  const actual = Object.keys(value)
  assert.deepEqual(actual.filter((k) => !declared.has(k)).sort(), [], `${where} has members ${type} does not declare`)
  const required = [...declared].filter(([, d]) => !d.optional).map(([k]) => k)
  assert.deepEqual(required.filter((k) => !(k in value)).sort(), [], `${where} lacks members ${type} requires`)
}

test('what the API returns has exactly the members its interface declares', async () => {
  const { blobSource, bytesSource, nodeFileSource, open, serialize, serializeAwkward, urlSource } = nodeEntry
  const bytes = await serialize({ w: { dtype: 'F32', shape: [4], data: new Float32Array(4) } })
  /** @type {(input: string, init: RequestInit) => Promise<Response>} */
  const fetch = async () => new Response(bytes, {
    status: 206, headers: { 'Content-Range': `bytes 0-${bytes.length - 1}/${bytes.length}`, 'Content-Type': 'application/octet-stream' },
  })
  const sources = {
    'bytesSource()': { source: bytesSource(bytes), type: 'ByteSource' },
    'blobSource()': { source: blobSource(new Blob([bytes])), type: 'ByteSource' },
    'nodeFileSource()': { source: await nodeFileSource(fileURLToPath(import.meta.url)), type: 'ByteSource' },
    'urlSource()': { source: await urlSource('https://example.org/w.safetensors', { fetch }), type: 'UrlSource' },
  }
  const file = await open(bytes)
  const index = new TextEncoder().encode(JSON.stringify({ weight_map: { w: 'shard.safetensors' } }))
  const sharded = await open(index, { shards: { 'shard.safetensors': bytes } })
  const tensor = await file.tensor('w')
  const awkwardFile = await open(await serializeAwkward([{ x: 1, y: 'a' }, null, { x: 2, y: 'bc' }]))
  const awkward = await awkwardFile.awkward()
  try {
    for (const [where, { source, type }] of Object.entries(sources)) assertMembers(source, type, where)
    assertMembers(file.info('w'), 'TensorInfo', 'SafetensorsFile.info()')
    assertMembers(await sharded.info('w'), 'ShardTensorInfo', 'ShardedFile.info()')
    assertMembers(tensor.stats(), 'Stats', 'Tensor.stats()')
    assert.ok(awkward.nodes.length > 3)
    for (const node of awkward.nodes) assertMembers(node, 'AwkwardNode', `AwkwardArray.nodes (${node.class})`)
  } finally {
    tensor.dispose()
    awkward.dispose()
    await Promise.all([file.close(), sharded.close(), awkwardFile.close()])
    for (const { source } of Object.values(sources)) await source.close?.()
  }
})

/**
 * The property names of each `options` or `details` parameter of a function's signatures.
 * @param {ts.Type} type a function's (or method's) type
 * @returns {Map<string, Set<string>>} parameter name -> property names
 */
function optionNames(type) {
  /** @type {Map<string, Set<string>>} */
  const names = new Map()
  for (const signature of type.getCallSignatures()) {
    for (const parameter of signature.getParameters()) {
      if (parameter.name !== 'options' && parameter.name !== 'details') continue
      const t = checker.getNonNullableType(checker.getTypeOfSymbol(parameter))
      const set = names.get(parameter.name) ?? new Set()
      for (const part of t.isUnion() ? t.types : [t]) for (const p of checker.getPropertiesOfType(part)) set.add(p.name)
      names.set(parameter.name, set)
    }
  }
  return names
}

/**
 * Every function of an entry and every method of its classes, with its type on each side.
 * @param {{ js: string, dts: string }} entry
 * @returns {Generator<{ where: string, js: ts.Type, dts: ts.Type }>}
 */
function* callables(entry) {
  const js = exportsOf(entry.js)
  const dts = exportsOf(entry.dts)
  for (const [name, symbol] of js) {
    const declared = dts.get(name)
    if (!declared || (kindOf(symbol) !== 'function' && kindOf(symbol) !== 'class')) continue
    if (kindOf(symbol) === 'function') {
      yield { where: name, js: checker.getTypeOfSymbol(symbol), dts: checker.getTypeOfSymbol(declared) }
      continue
    }
    const ctor = (/** @type {ts.Symbol} */ s) => checker.getTypeOfSymbol(s).getConstructSignatures()
    const [jsCtor] = ctor(symbol)
    const [dtsCtor] = ctor(declared)
    if (jsCtor && dtsCtor && name === 'SafetensorsError') {
      // Only this constructor is public: the others take the core and internal state.
      const asCall = (/** @type {ts.Signature} */ s) => /** @type {ts.Type} */ ({ getCallSignatures: () => [s] })
      yield { where: `new ${name}`, js: asCall(jsCtor), dts: asCall(dtsCtor) }
    }
    const jsInstance = checker.getDeclaredTypeOfSymbol(symbol)
    const dtsInstance = checker.getDeclaredTypeOfSymbol(declared)
    for (const member of jsInstance.getProperties()) {
      const other = dtsInstance.getProperty(member.name)
      if (!other || !(member.flags & ts.SymbolFlags.Method)) continue
      yield { where: `${name}.${member.name}`, js: checker.getTypeOfSymbol(member), dts: checker.getTypeOfSymbol(other) }
    }
  }
}

test("every option the code's JSDoc names is declared", () => {
  let compared = 0
  for (const entry of ENTRIES) {
    for (const { where, js, dts } of callables(entry)) {
      const declared = optionNames(dts)
      for (const [parameter, names] of optionNames(js)) {
        const typed = declared.get(parameter) ?? new Set()
        const untyped = [...names].filter((n) => !typed.has(n))
        assert.deepEqual(untyped, [], `${where}: ${parameter} the code takes but ${entry.dts} does not declare`)
        compared++
      }
    }
  }
  assert.ok(compared > 20, `only ${compared} option parameters compared: the walk broke`)
})

/** The string literals of a union type alias exported by index.d.ts. @param {string} name */
function literals(name) {
  const symbol = /** @type {ts.Symbol} */ (exportsOf('js/index.d.ts').get(name))
  const type = checker.getDeclaredTypeOfSymbol(symbol)
  return (type.isUnion() ? type.types : [type]).map((t) => (t.isStringLiteral() ? t.value : checker.typeToString(t)))
}

test('the ErrorCode and Dtype unions list exactly ERROR_CODES and DTYPES', () => {
  assert.deepEqual(literals('ErrorCode').sort(), [...nodeEntry.ERROR_CODES].sort())
  assert.deepEqual(literals('Dtype').sort(), [...nodeEntry.DTYPES].sort())
})

test('tests/types/usage.ts imports every name the .d.ts files export', () => {
  const path = at('tests/types/usage.ts')
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true)
  const imported = new Set()
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue
    if (statement.moduleSpecifier.text !== 'safetensors-wasm') continue
    const bindings = statement.importClause?.namedBindings
    if (bindings && ts.isNamedImports(bindings)) for (const e of bindings.elements) imported.add((e.propertyName ?? e.name).text)
  }
  const exported = [...exportsOf('js/node.d.ts').keys()]
  assert.deepEqual(exported.filter((n) => !imported.has(n)).sort(), [], 'usage.ts does not exercise these exports')
})
