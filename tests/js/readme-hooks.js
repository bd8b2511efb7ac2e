/**
 * Module hooks of the README snippet test, registered by readme-preload.js. `import ... from
 * 'safetensors-wasm'` in a snippet is first resolved by Node itself (the package's self-reference:
 * the snippet sits inside the package's folder), and that module is then given to the snippet
 * through a module in between that re-exports all of it and records the calls of its functions
 * (readme-preload.js `recorded`) and the URL Node resolved. Nothing else is touched.
 */

const PACKAGE = 'safetensors-wasm'
const MARK = '?readme-record'

/** @type {{ snippets: string, recorder: string }} */
let options = { snippets: '\0', recorder: '' }

/** @param {{ snippets: string, recorder: string }} data */
export async function initialize(data) { options = data }

/**
 * @param {string} specifier
 * @param {{ parentURL?: string, conditions: string[], importAttributes: Record<string, string> }} context
 * @param {(specifier: string, context?: object) => Promise<{ url: string, format?: string | null }>} nextResolve
 */
export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context)
  if (specifier !== PACKAGE || !context.parentURL?.startsWith(options.snippets)) return resolved
  return { url: `${resolved.url}${MARK}`, format: 'module', shortCircuit: true }
}

/**
 * @param {string} url
 * @param {{ format?: string | null, conditions: string[], importAttributes: Record<string, string> }} context
 * @param {(url: string, context?: object) => Promise<{ format: string, source?: string | ArrayBuffer | Uint8Array }>} nextLoad
 */
export async function load(url, context, nextLoad) {
  if (!url.endsWith(MARK)) return nextLoad(url, context)
  const real = url.slice(0, -MARK.length)
  const exports = await import(real)
  const functions = Object.keys(exports).filter((name) => typeof exports[name] === 'function' &&
    !/^class[\s{]/.test(Function.prototype.toString.call(exports[name])))
  const source = [
    `import * as real from ${JSON.stringify(real)}`,
    `import { recorded, resolvedAs } from ${JSON.stringify(options.recorder)}`,
    `export * from ${JSON.stringify(real)}`,
    `resolvedAs(${JSON.stringify(real)})`,
    ...functions.map((name) => `export const ${name} = recorded(${JSON.stringify(name)}, real.${name})`),
  ].join('\n')
  return { format: 'module', source, shortCircuit: true }
}
