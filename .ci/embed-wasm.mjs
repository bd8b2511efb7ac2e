// Re-embeds the wasm of an Emscripten SINGLE_FILE module more compactly: Emscripten writes it
// as base64, which gzip squeezes poorly (the 6-bit symbols straddle bytes); this writes it as a
// string literal whose characters are the bytes (U+0000-U+00FF, escaped where JS needs it), ~23%
// smaller once gzipped, and hands it to the module factory as `wasmBinary`. Loading stays
// path-free and fetch-free.
//   node .ci/embed-wasm.mjs dist/safetensors_core.mjs
import { readFileSync, writeFileSync } from 'node:fs'

const file = process.argv[2]
const text = readFileSync(file, 'utf8')
const uri = /"data:application\/octet-stream;base64,([A-Za-z0-9+/=]+)"/.exec(text)
const tail = 'export default createCore;'
if (!uri || !text.trimEnd().endsWith(tail)) {
  console.error(`${file}: not the SINGLE_FILE ES module this script knows (Emscripten changed?)`)
  process.exit(1)
}
const wasm = Buffer.from(uri[1], 'base64')
// NUL stays raw (JS allows any code point but line terminators, quote and backslash in a
// string literal): wasm is full of zero bytes, and \x00 costs 3.6 KB more once gzipped.
const escapes = { 10: '\\n', 13: '\\r', 34: '\\"', 92: '\\\\' }
let literal = ''
for (const b of wasm) literal += escapes[/** @type {keyof typeof escapes} */ (b)] ?? String.fromCharCode(b)
const glue = text.replace(uri[1], '').trimEnd().slice(0, -tail.length)
const out = `${glue}
const wasm = "${literal}";
/** The module, instantiated from the bytes above (built with INCOMING_MODULE_JS_API=[wasmBinary]). */
export default function createCoreEmbedded() {
  const wasmBinary = new Uint8Array(wasm.length);
  for (let i = 0; i < wasm.length; i++) wasmBinary[i] = wasm.charCodeAt(i);
  return createCore({ wasmBinary });
}
`
// Round trip before writing: the literal must give back the very bytes.
const back = new Function(`return "${literal}"`)()
if (back.length !== wasm.length || [...wasm].some((b, i) => back.charCodeAt(i) !== b)) {
  console.error(`${file}: the embedded wasm does not round-trip`)
  process.exit(1)
}
writeFileSync(file, out)
