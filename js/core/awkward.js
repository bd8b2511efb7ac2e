/**
 * The awkward reader's calls into the wasm core (st::AwkwardReader in src/api.hpp), apart from
 * ./index.js so that they load with the awkward reader (js/awkward/) and a page that never
 * opens an awkward file does not carry them.
 */
import { dtypeIndex } from '../dtypes.js'
import { SafetensorsError, fromCoreError } from '../errors.js'
import { RESERVE_SLACK, reserveFor } from './index.js'

/** @typedef {import('./index.js').Core} Core */

const encoder = /* @__PURE__ */ new TextEncoder()

/**
 * What a form's parse, check and tree may allocate in the core, per byte of its UTF-8 text: a
 * node of a few bytes ('{"class":"EmptyArray"}') becomes an AkNode of about 150 bytes, its
 * vector may be copied while it grows, and its tree() entry is some 150 bytes more, twice (the
 * C++ string and Embind's copy). About 25 at worst: 64 is reserved.
 */
const FORM_RESERVE_FACTOR = 64

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
    // Built without exceptions, the core aborts on a failed allocation; Embind copies the
    // strings into the heap without checking malloc (a null pointer, and the form is written
    // over the bottom of memory, the allocator's own state included: later calls may loop
    // forever). Everything the calls below allocate fits in the block reserved here
    // (js/core/index.js reserveFor).
    const textBytes = encoder.encode(form).length + encoder.encode(length).length
    reserveFor(core, FORM_RESERVE_FACTOR * textBytes + 16 * RESERVE_SLACK)
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

  /**
   * The reader, with room in the heap for what a check allocates (a verdict's message and its
   * JSON, each a string Embind copies), or Disposed.
   */
  #checking() {
    const reader = this.#live()
    reserveFor(this.#core, RESERVE_SLACK)
    return reader
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
    this.#verdict(this.#core.awkwardReaderCheckOffsets(this.#checking(), node, ptr, first, count))
  }

  /** @param {number} node @param {number} starts @param {number} stops @param {number} first @param {number} count */
  checkLists(node, starts, stops, first, count) {
    this.#verdict(this.#core.awkwardReaderCheckLists(this.#checking(), node, starts, stops, first, count))
  }

  /** @param {number} node @param {number} index @param {number} first @param {number} count */
  checkIndex(node, index, first, count) {
    this.#verdict(this.#core.awkwardReaderCheckIndex(this.#checking(), node, index, first, count))
  }

  /** @param {number} node @param {number} tags @param {number} index @param {number} first @param {number} count */
  checkUnion(node, tags, index, first, count) {
    this.#verdict(this.#core.awkwardReaderCheckUnion(this.#checking(), node, tags, index, first, count))
  }
}
