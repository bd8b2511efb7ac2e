/**
 * The parsed tensor table: the header's columns as js/core/ copied them out of the heap at open
 * (no C++ object outlives `open`). JS objects for single tensors are made lazily: a header of
 * 10,000 tensors costs a few typed arrays until someone asks.
 */
import { SafetensorsError } from './errors.js'
import { elementCount } from './dtypes.js'
import { lowerBound } from './name-finder.js'

const utf8 = /* @__PURE__ */ new TextDecoder('utf-8', { fatal: false })

/**
 * @typedef {{ name: string, dtype: string, shape: number[], byteOffset: number, byteLength: number }} TensorInfo
 */

export class TensorTable {
  /**
   * @param {import('./core/index.js').HeaderTable} header
   * @param {number} dataOffset absolute file offset of the data buffer (8 + N)
   */
  constructor(header, dataOffset) {
    this.header = header
    this.count = header.count
    this.dataOffset = dataOffset
    this.metadata = header.metadata
    /** @type {string[] | null} */
    this.namesCache = null
    /** @type {Map<string, number> | null} */
    this.indexCache = null
    /** Where in byName the next name looked up is expected (indexOf). */
    this.cursor = 0
    /** @type {string | undefined} the names' arena, decoded */
    this.arenaText = undefined
  }

  /** Tensor names in file (offset) order. */
  get names() {
    if (!this.namesCache) {
      const names = new Array(this.count)
      const { strings, nameOffset, nameLength } = this.header
      // One decode of the whole arena: when it is ASCII (as names nearly always are), every
      // byte is one UTF-16 unit and each name is a slice of the text at its byte offsets.
      // (Valid UTF-8 decodes to fewer units than bytes as soon as one byte is not ASCII.)
      const text = (this.arenaText ??= utf8.decode(strings))
      if (text.length === strings.length) {
        for (let i = 0; i < this.count; i++) names[i] = text.slice(nameOffset[i], nameOffset[i] + nameLength[i])
      } else {
        for (let i = 0; i < this.count; i++)
          names[i] = utf8.decode(strings.subarray(nameOffset[i], nameOffset[i] + nameLength[i]))
      }
      this.namesCache = names
    }
    return this.namesCache
  }

  /** Positions in file order, sorted by the names' bytes (the core's order; see indexOf). */
  get byName() { return this.header.byName }

  /** @param {RegExp} pattern @returns {boolean} whether some name matches `pattern` (one search, no names made) */
  mentions(pattern) {
    this.arenaText ??= utf8.decode(this.header.strings)
    return pattern.test(this.arenaText)
  }

  /**
   * @param {string} name @returns {number} the tensor's index in file order, or -1
   * Names asked for in order of their bytes (an index's names, written with sorted keys, shard
   * by shard) are found with one comparison each: the name after the last one found, in the
   * header's name order (byName). Others by a binary search there; a name that finds no equal
   * (absent, or among names whose UTF-16 order is not their byte order) in a table of every
   * name, made then. At 500,000 names over a set's shards, making those tables and looking up
   * in them cost about a microsecond a name each.
   */
  indexOf(name) {
    const names = this.names
    const order = this.byName
    const next = order[this.cursor]
    if (next !== undefined && names[next] === name) {
      this.cursor++
      return next
    }
    if (!this.indexCache) {
      const lo = lowerBound(0, order.length, (k) => names[order[k]], name)
      if (lo < order.length && names[order[lo]] === name) {
        this.cursor = lo + 1
        return order[lo]
      }
      this.indexCache = new Map()
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
  dtype(i) { return this.header.dtype[i] }

  /** @param {number} i @returns {any[]} */
  shape(i) {
    const { dims, dimsOffset, rank } = this.header
    return dims.slice(dimsOffset[i], dimsOffset[i] + rank[i])
  }

  /** @param {number} i absolute file offset of the tensor's first byte */
  byteOffset(i) { return this.dataOffset + this.header.begin[i] }

  /** @param {number} i */
  byteLength(i) { return this.header.end[i] - this.header.begin[i] }

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
  elementCount(i) { return elementCount(this.shape(i)) }
}
