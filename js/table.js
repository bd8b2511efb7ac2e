/**
 * The parsed tensor table, copied out of the heap once at open (one memcpy of the core's
 * arrays) so that no C++ object outlives `open`. JS objects for single tensors are made
 * lazily: a header of 10,000 tensors costs three typed arrays until someone asks.
 */
import { DTYPES } from './dtypes.js'
import { SafetensorsError } from './errors.js'

const WORDS_PER_TENSOR = 10  // st::TensorInfo, 40 bytes: see the static_asserts in bindings.cpp
const utf8 = /* @__PURE__ */ new TextDecoder('utf-8', { fatal: false })
const TWO_32 = 2 ** 32

/**
 * A 64-bit value from two uint32 words. Values above 2^53 cannot be Numbers without losing
 * precision: they come back as BigInt (only a dimension of a zero-size tensor can be that big).
 * @param {number} lo
 * @param {number} hi
 * @returns {number | bigint}
 */
export function u64(lo, hi) {
  if (hi < 0x200000) return hi * TWO_32 + lo
  return (BigInt(hi) << 32n) | BigInt(lo)
}

/**
 * @typedef {{ name: string, dtype: string, shape: number[], byteOffset: number, byteLength: number }} TensorInfo
 */

export class TensorTable {
  /**
   * @param {any} core
   * @param {number} parsed the handle of a st::ParsedFile that has parsed successfully
   * @param {number} dataOffset absolute file offset of the data buffer (8 + N)
   */
  constructor(core, parsed, dataOffset) {
    // Where the core keeps the header: see st::ParsedFile::tables.
    const at = core.parsedFileTables(parsed)
    const heap = core.HEAPU8.buffer
    const [tensors, count, strings, stringsLength, dims, hasMetadata, metadataTable, metadataCount] =
      new Uint32Array(heap, at, 8)
    this.count = count
    this.dataOffset = dataOffset
    this.words = new Uint32Array(heap.slice(tensors, tensors + count * 40))
    this.strings = new Uint8Array(heap.slice(strings, strings + stringsLength))
    const dimWords = this.words.length === 0 ? 0 : this.#dimsWordCount()
    this.dims = new Uint32Array(heap.slice(dims, dims + dimWords * 4))
    /** @type {Record<string, string> | null} */
    this.metadata = null
    if (hasMetadata) {
      const m = new Uint32Array(heap.slice(metadataTable, metadataTable + metadataCount * 16))
      /** @type {Record<string, string>} */
      const metadata = {}
      // defineProperty, not assignment: a key named "__proto__" must stay an ordinary entry.
      for (let i = 0; i < m.length; i += 4)
        Object.defineProperty(metadata, this.#string(m[i], m[i + 1]),
          { value: this.#string(m[i + 2], m[i + 3]), enumerable: true, writable: true, configurable: true })
      this.metadata = metadata
    }
    /** @type {string[] | null} */
    this.namesCache = null
    /** @type {Map<string, number> | null} */
    this.indexCache = null
  }

  #dimsWordCount() {
    let max = 0
    for (let i = 0; i < this.count; i++) {
      const w = i * WORDS_PER_TENSOR
      max = Math.max(max, this.words[w + 6] + this.words[w + 7])
    }
    return max * 2
  }

  /** @param {number} offset @param {number} length */
  #string(offset, length) {
    return utf8.decode(this.strings.subarray(offset, offset + length))
  }

  /** Tensor names in file (offset) order. */
  get names() {
    if (!this.namesCache) {
      const names = new Array(this.count)
      const words = this.words
      // One decode of the whole arena: when it is ASCII (as names nearly always are), every
      // byte is one UTF-16 unit and each name is a slice of the text at its byte offsets.
      // (Valid UTF-8 decodes to fewer units than bytes as soon as one byte is not ASCII.)
      const text = utf8.decode(this.strings)
      if (text.length === this.strings.length) {
        for (let i = 0, w = 4; i < this.count; i++, w += WORDS_PER_TENSOR)
          names[i] = text.slice(words[w], words[w] + words[w + 1])
      } else {
        for (let i = 0, w = 4; i < this.count; i++, w += WORDS_PER_TENSOR)
          names[i] = this.#string(words[w], words[w + 1])
      }
      this.namesCache = names
    }
    return this.namesCache
  }

  /** @param {string} name @returns {number} the tensor's index in file order, or -1 */
  indexOf(name) {
    if (!this.indexCache) {
      this.indexCache = new Map()
      const names = this.names
      for (let i = 0; i < names.length; i++) this.indexCache.set(names[i], i)
    }
    return this.indexCache.get(name) ?? -1
  }

  /** @param {string} name */
  require(name) {
    const i = this.indexOf(name)
    if (i < 0) throw new SafetensorsError('TensorNotFound', `no tensor named ${JSON.stringify(name)} in this file`, { tensor: name })
    return i
  }

  /** @param {number} i */
  dtype(i) { return DTYPES[this.words[i * WORDS_PER_TENSOR + 8] & 0xff] }

  /** @param {number} i @returns {any[]} */
  shape(i) {
    const w = i * WORDS_PER_TENSOR
    const offset = this.words[w + 6]
    const rank = this.words[w + 7]
    const shape = new Array(rank)
    for (let d = 0; d < rank; d++) shape[d] = u64(this.dims[(offset + d) * 2], this.dims[(offset + d) * 2 + 1])
    return shape
  }

  /** @param {number} i absolute file offset of the tensor's first byte */
  byteOffset(i) {
    const w = i * WORDS_PER_TENSOR
    return this.dataOffset + /** @type {number} */ (u64(this.words[w], this.words[w + 1]))
  }

  /** @param {number} i */
  byteLength(i) {
    const w = i * WORDS_PER_TENSOR
    return /** @type {number} */ (u64(this.words[w + 2], this.words[w + 3])) -
      /** @type {number} */ (u64(this.words[w], this.words[w + 1]))
  }

  /** @param {number} i @returns {TensorInfo} */
  info(i) {
    return {
      name: this.names[i],
      dtype: this.dtype(i),
      shape: this.shape(i),
      byteOffset: this.byteOffset(i),
      byteLength: this.byteLength(i),
    }
  }

  /** @param {number} i element count (exact: valid tensors have at most 8 x file length elements) */
  elementCount(i) {
    let n = 1
    for (const d of this.shape(i)) n *= Number(d)
    return n
  }
}
