/**
 * The awkward reader's calls into the wasm core (st::AwkwardReader in src/api.hpp), apart from
 * ./index.js so that they load with the awkward reader (js/awkward/) and a page that never
 * opens an awkward file does not carry them.
 */
import { dtypeIndex } from '../dtypes.js'
import { SafetensorsError, fromCoreError } from '../errors.js'

/** @typedef {import('./index.js').Core} Core */

// The core's form state is freed with the AwkwardForm, which the read context of every view of
// an array holds: once none is reachable, the registry frees it if dispose() was not called.
/** @type {FinalizationRegistry<{ core: Core, reader: number }>} */
const registry = /* @__PURE__ */ new FinalizationRegistry(({ core, reader }) => core.awkwardReaderDelete(reader))

/**
 * A form (metadata "form" and "length") parsed and checked in C++ against a file's tensors; it
 * then validates the offsets, starts, stops, index and tags elements that JS reads into the
 * heap before they are used as positions. Holds core memory: dispose() frees it.
 */
export class AwkwardForm {
  #core
  /** @type {number | null} */
  #reader

  /**
   * Parses the form, binds each buffer it names that the file has, and checks them all (presence,
   * dtype, enough elements for the length). Throws the core's verdict.
   * @param {Core} core
   * @param {string} form
   * @param {string} length
   * @param {(name: string) => { dtype: string, elements: number, byteOffset: number } | null} tensor
   *   the file's tensor of that name, or null
   */
  constructor(core, form, length, tensor) {
    const reader = core.awkwardReaderNew()
    try {
      if (!core.awkwardReaderParse(reader, form, length)) throw fromCoreError(core.awkwardReaderError(reader))
      for (let i = 0; i < core.awkwardReaderBufferCount(reader); i++) {
        const t = tensor(core.awkwardReaderBufferName(reader, i))
        if (t) core.awkwardReaderBindBuffer(reader, i, dtypeIndex(t.dtype), t.elements, t.byteOffset)
      }
      if (!core.awkwardReaderCheck(reader)) throw fromCoreError(core.awkwardReaderError(reader))
      /**
       * The form's nodes in preorder and the array's length (st::akFormTreeJson).
       * @type {{ length: number, nodes: import('../awkward/read.js').AkNode[] }}
       */
      this.tree = JSON.parse(core.awkwardReaderTree(reader))
    } catch (error) {
      core.awkwardReaderDelete(reader)
      throw error
    }
    this.#core = core
    this.#reader = reader
    registry.register(this, { core, reader }, this)
  }

  get disposed() { return this.#reader === null }

  dispose() {
    if (this.#reader === null) return
    registry.unregister(this)
    this.#core.awkwardReaderDelete(this.#reader)
    this.#reader = null
  }

  /** Throws Disposed once the form is disposed. */
  throwIfDisposed() {
    this.#live()
  }

  #live() {
    if (this.#reader === null) throw new SafetensorsError('Disposed', 'the awkward array was disposed')
    return this.#reader
  }

  /** @param {boolean} ok */
  #verdict(ok) {
    if (!ok) throw fromCoreError(this.#core.awkwardReaderError(this.#live()))
  }

  /**
   * Offsets elements [first, first + count) of node `node`, at heap address `ptr`. Each check
   * throws the core's verdict, or Disposed.
   * @param {number} node @param {number} ptr @param {number} first @param {number} count
   */
  checkOffsets(node, ptr, first, count) {
    this.#verdict(this.#core.awkwardReaderCheckOffsets(this.#live(), node, ptr, first, count))
  }

  /** @param {number} node @param {number} starts @param {number} stops @param {number} first @param {number} count */
  checkLists(node, starts, stops, first, count) {
    this.#verdict(this.#core.awkwardReaderCheckLists(this.#live(), node, starts, stops, first, count))
  }

  /** @param {number} node @param {number} index @param {number} first @param {number} count */
  checkIndex(node, index, first, count) {
    this.#verdict(this.#core.awkwardReaderCheckIndex(this.#live(), node, index, first, count))
  }

  /** @param {number} node @param {number} tags @param {number} index @param {number} first @param {number} count */
  checkUnion(node, tags, index, first, count) {
    this.#verdict(this.#core.awkwardReaderCheckUnion(this.#live(), node, tags, index, first, count))
  }
}
