/**
 * One operation at a time (opening a file, fetching a tensor), with a progress bar and a Cancel
 * button. Starting a new one supersedes the running one: its AbortSignal aborts, and its error
 * is not shown. Cancel (or Escape) aborts the running one and says so.
 */
import { formatBytes } from './format.js'

/**
 * @typedef {(loaded: number, total: number, text?: string) => void} Progress  text: instead of byte counts
 * @typedef {{ controller: AbortController, superseded: boolean }} Running
 */

export class Tasks {
  /** @type {Running | null} */
  #running = null

  /**
   * @param {{ status: HTMLElement, text: HTMLElement, progress: HTMLProgressElement, cancel: HTMLButtonElement,
   *   notice: (message: string) => void, error: (error: unknown) => void }} ui
   */
  constructor(ui) {
    this.ui = ui
    ui.cancel.addEventListener('click', () => this.cancel())
  }

  get busy() { return this.#running !== null }

  /** Aborts the running operation, if any. */
  cancel() {
    this.#running?.controller.abort()
  }

  /**
   * Runs `work` with a fresh signal and a progress callback. Resolves to its result, or to null
   * when it failed (the error is shown), was cancelled (a notice says so) or was superseded.
   * @template T
   * @param {string} label what is being done, e.g. "Fetching lm_head.weight"
   * @param {(signal: AbortSignal, progress: Progress) => Promise<T>} work
   * @returns {Promise<T | null>}
   */
  async run(label, work) {
    if (this.#running) {
      this.#running.superseded = true
      this.#running.controller.abort()
    }
    /** @type {Running} */
    const running = { controller: new AbortController(), superseded: false }
    this.#running = running
    const { status, text, progress } = this.ui
    text.textContent = `${label}…`
    progress.removeAttribute('value')  // indeterminate until there is a total
    status.hidden = false
    /** @type {Progress} */
    const onProgress = (loaded, total, what) => {
      if (running.superseded || total <= 0) return
      progress.max = total
      progress.value = loaded
      text.textContent = what ?? `${label}: ${formatBytes(loaded)} of ${formatBytes(total)}`
    }
    try {
      return await work(running.controller.signal, onProgress)
    } catch (error) {
      if (running.superseded) return null
      if (running.controller.signal.aborted) this.ui.notice(`Cancelled: ${label.charAt(0).toLowerCase()}${label.slice(1)}.`)
      else this.ui.error(error)
      return null
    } finally {
      if (this.#running === running) {
        this.#running = null
        status.hidden = true
      }
    }
  }
}
