/**
 * A small element builder: el('button', { class: 'x', onclick: f, 'aria-label': 'y' }, 'text').
 * Attributes that are null, undefined or false are left out; true sets an empty attribute.
 */
import { invisibleParts } from '../../js/format.js'

/**
 * @param {string} tag
 * @param {Record<string, any>} [props] class, text, dataset, style, on<event> handlers, attributes
 * @param {...(Node | string | null | undefined | false | Array<Node | string | null | undefined | false>)} children
 * @returns {HTMLElement}
 */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag)
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue
    if (key === 'class') node.className = value
    else if (key === 'text') node.textContent = value
    else if (key === 'dataset') Object.assign(node.dataset, value)
    else if (key.startsWith('on') && typeof value === 'function') node.addEventListener(key.slice(2), value)
    // Through the CSSOM: the page's Content-Security-Policy refuses style attributes.
    else if (key === 'style') node.style.cssText = String(value)
    else node.setAttribute(key, value === true ? '' : String(value))
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined && child !== false) node.append(child)
  }
  return node
}

/** @param {string} id @returns {HTMLElement} */
export function byId(id) {
  const node = document.getElementById(id)
  if (!node) throw new Error(`#${id} is missing from the page`)
  return node
}

/**
 * Calls `draw` at most once per animation frame, however often `schedule` is called.
 * @param {() => void} draw
 */
export function throttled(draw) {
  let pending = false
  return () => {
    if (pending) return
    pending = true
    requestAnimationFrame(() => {
      pending = false
      draw()
    })
  }
}

/**
 * `text` as nodes for el(), its bidirectional controls and invisible characters (escapeInvisible
 * in js/format.js) shown as marked escapes: `\u{202E}` in a span with a tooltip saying what it
 * stands for, so that `\u202Eexe.txt` never reads as `txt.exe`. Names, metadata and messages
 * from a file go through this; a plain string comes back as it is.
 * @param {string} text
 * @param {{ multiline?: boolean }} [options] keep newlines and tabs (metadata values)
 * @returns {Array<Node | string>}
 */
export function visible(text, options) {
  return invisibleParts(text, options).map((part) => (typeof part === 'string' ? part
    : el('span', { class: 'invisible-char', title: part.title, text: part.escape })))
}

/**
 * A dotted name as nodes for el() that may wrap after its dots (model.<wbr>layers.<wbr>0…), its
 * invisible characters marked as visible() marks them: a long name in a narrow title breaks
 * between its parts rather than before its last letter.
 * @param {string} name @returns {Array<Node | string>}
 */
export function wrappable(name) {
  /** @type {Array<Node | string>} */
  const out = []
  for (const part of visible(name)) {
    if (typeof part !== 'string') out.push(part)
    else part.split(/(?<=\.)/).forEach((piece, i) => out.push(...(i > 0 ? [document.createElement('wbr'), piece] : [piece])))
  }
  return out
}
