/**
 * The open panel folded to one line once a file is shown: the file's name, where it came from (its
 * URL, its hf:// address, or local files) and a Change button that unfolds the inputs again (and
 * folds them back). The inputs take about 290 px; folded, the tensor table starts above the fold
 * of a laptop screen. While folded the line also stands in for the summary's heading (the same
 * name and badge; style.css hides that one). With no file open, the inputs are shown and the line
 * is not.
 */
import { el, visible } from './dom.js'
import { escapeInvisible } from './format.js'

export class SourceLine {
  /** @param {HTMLElement} panel the open panel: every child but the line is hidden while folded */
  constructor(panel) {
    this.panel = panel
    this.name = el('span', { id: 'source-name', class: 'source-name mono' })
    this.where = el('span', { id: 'source-where', class: 'source-where' })
    this.badge = el('span', { id: 'source-badge', class: 'badge' })
    this.button = /** @type {HTMLButtonElement} */ (el('button', {
      id: 'source-change', type: 'button', class: 'source-change', 'aria-expanded': 'false',
      'aria-controls': panel.id || undefined, text: 'Change',
      onclick: () => this.#toggle(),
    }))
    this.line = el('div', { id: 'source-line', class: 'source-line', hidden: true },
      el('span', { class: 'source-label', text: 'Open' }), this.name, this.badge, this.where, this.button)
    panel.prepend(this.line)
  }

  /**
   * Folds the panel to the line naming the open file.
   * @param {string} name the file's name (or the index's, for a sharded set)
   * @param {string} source its URL or hf:// address, or what local files were opened
   * @param {string} kind what it is (the summary's badge: remote file, sharded · 3 shards...)
   */
  fold(name, source, kind) {
    this.badge.textContent = kind
    this.name.replaceChildren(...visible(name))
    this.name.title = escapeInvisible(name)
    this.where.replaceChildren(...visible(source))
    this.where.title = escapeInvisible(source)
    this.line.hidden = false
    this.#set(false)
  }

  /** No file open: the inputs, without the line. */
  reset() {
    this.line.hidden = true
    this.#set(true)
  }

  #toggle() {
    const open = this.button.getAttribute('aria-expanded') !== 'true'
    this.#set(open)
    if (open) /** @type {HTMLElement | null} */ (this.panel.querySelector('input[type="text"]'))?.focus()
  }

  /** @param {boolean} open the inputs shown */
  #set(open) {
    this.panel.classList.toggle('folded', !open)
    this.button.setAttribute('aria-expanded', String(open))
    this.button.textContent = open && !this.line.hidden ? 'Hide' : 'Change'
  }
}
