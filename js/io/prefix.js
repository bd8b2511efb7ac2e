/**
 * A file's first bytes as its first answer brought them: the body's pieces, joined only when
 * asked. A shard's header goes from its pieces to the wasm heap; joining them first would
 * allocate and fill a fresh buffer per shard (34 MB over 282 shards) for one copy's use.
 */
export class Prefix {
  /** @param {Uint8Array[]} pieces @param {number} length at most their total: the bytes kept */
  constructor(pieces, length) {
    /** @type {Uint8Array[]} */
    this.pieces = pieces
    this.length = length
  }

  /** @param {Uint8Array} bytes */
  static of(bytes) {
    return new Prefix([bytes], bytes.length)
  }

  /**
   * Bytes [from, to) (within length) as views of the pieces, in order.
   * @param {number} from @param {number} to
   * @returns {Generator<Uint8Array>}
   */
  *spans(from, to) {
    for (let i = 0, at = 0; i < this.pieces.length && at < to; at += this.pieces[i++].length) {
      const piece = this.pieces[i]
      if (at + piece.length > from) yield piece.subarray(Math.max(0, from - at), Math.min(piece.length, to - at))
    }
  }

  /** Bytes [from, to) in one array: a view where one piece holds them. @param {number} from @param {number} to */
  slice(from, to) {
    const spans = [...this.spans(from, to)]
    return spans.length === 1 ? spans[0] : concat(spans, to - from)
  }

  /** Every byte kept, in one array (the pieces joined once). */
  bytes() {
    if (this.pieces.length !== 1) this.pieces = [concat(this.pieces, this.length)]
    return this.pieces[0].subarray(0, this.length)
  }
}

/** The first `n` bytes of `chunks` in one array. @param {Uint8Array[]} chunks @param {number} n */
export function concat(chunks, n) {
  const out = new Uint8Array(n)
  for (let i = 0, at = 0; at < n; at += chunks[i++].length) out.set(chunks[i].subarray(0, n - at), at)
  return out
}
