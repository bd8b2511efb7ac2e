/**
 * The tensors as a tree of dotted name prefixes (model › layers › 3 › mlp › …; built by
 * js/name-tree.js, as `inspect --tree` does), each group with its tensor count and size. Groups
 * are native <details> elements and tensors are buttons, so the tree works with the keyboard as
 * it is.
 *
 * Files can hold hundreds of thousands of names, or names thousands of levels deep: the names
 * are grouped once, when the tree is first shown (indexNames), and each filter takes the tree of
 * its matches from that in one pass (treeOf, at most MAX_TREE_DEPTH levels). Drawing is bounded
 * too: a group draws its first TREE_CHILDREN children and a line to show more, and past
 * TREE_NODES nodes in all, groups draw their children only when opened. Nothing recurses.
 *
 * Layers that repeat one structure are shown once (foldRepeats, js/name-tree.js): `layers.{0..60}`
 * says how many there are, holds the first one's tensors as the pattern, and can list them one
 * by one. A tensor whose shard header is not read yet shows … for its dtype, shape and size.
 *
 * A quantized weight is one leaf (its scheme and logical shape), its stored parts folded under
 * it in a <details> of their own.
 */
import { JOINED_MARK, MAX_TREE_DEPTH, foldRepeats, indexNames, knownTotals, treeOf } from '../../js/name-tree.js'
import { el, visible } from './dom.js'
import { escapeInvisible, formatBytes, formatCount, formatShape } from './format.js'
import { UNKNOWN, UNREADABLE, schemeBadge } from './table.js'

/**
 * @typedef {import('./model.js').Row} Row
 * @typedef {import('../../js/name-tree.js').TreeNode} TreeNode
 * @typedef {{ ul: HTMLElement, group: TreeNode, depth: number, from: number }} Fill
 */

/** Children a group draws at a time; a line under them draws the next ones. */
export const TREE_CHILDREN = 500
/** Nodes drawn at once in all; past them, a group draws its children when it is opened. */
export const TREE_NODES = 3000
/** Levels indented in full. */
const INDENTED_LEVELS = 12
/** Files of more tensors than this show alike layers once unless asked not to; smaller ones in full. */
const FOLD_FROM = 1000

export class TensorTree {
  /** @param {(name: string, part?: boolean) => void} onSelect */
  constructor(onSelect) {
    this.onSelect = onSelect
    /** @type {string | null} */
    this.selected = null
    this.selectedPart = false
    /** @type {Row[]} */
    this.rows = []
    /** @type {import('../../js/name-tree.js').NameIndex<Row> | null} grouped on first show */
    this.index = null
    /** Whether alike layers show once (foldRepeats); the reader's choice once made. */
    this.fold = false
    /** @type {TreeNode | null} the tree drawn last */
    this.root = null
    /** @type {Map<TreeNode, import('../../js/name-tree.js').KnownTotals> | null} its groups' counts so far, made when first needed */
    this.known = null
    this.element = el('div', { class: 'tensor-tree' })
    this.element.addEventListener('click', (e) => {
      const button = /** @type {HTMLElement} */ (e.target).closest('button.tree-leaf')
      if (!(button instanceof HTMLElement)) return
      if (button.dataset.part !== undefined) this.onSelect(button.dataset.part, true)
      else if (button.dataset.name !== undefined) this.onSelect(button.dataset.name)
    })
  }

  /**
   * Takes a file's rows; nothing is built or drawn until show().
   * @param {Row[]} rows
   */
  setRows(rows) {
    this.rows = rows
    this.index = null
    this.fold = rows.length > FOLD_FROM
    this.element.replaceChildren()
  }

  /**
   * Draws the tree of the rows that `mask` keeps (all of them when null).
   * @param {Uint8Array | null} mask 1 at the `order` of each row to show
   * @param {boolean} expandAll open every group (while searching)
   */
  show(mask, expandAll) {
    this.index ??= indexNames(this.rows)
    const tree = treeOf(this.index, mask ? (r) => mask[r.order] === 1 : null)
    const root = this.fold ? foldRepeats(tree) : tree
    this.root = root
    this.known = null
    if (root.tensors === 0) {
      this.element.replaceChildren(el('p', { class: 'muted', text: 'No tensor matches.' }))
      return
    }
    // Open the first levels of a small model (of a folded tree, as many as show ~60 lines);
    // everything while searching.
    const openDepth = expandAll ? Infinity : this.fold ? levelsWithin(root, 60) : root.tensors > 400 ? 1 : 2
    const ul = el('ul', { class: 'tree-root', 'aria-label': 'Tensors by name prefix' })
    this.#fill({ ul, group: root, depth: 0, from: 0 }, openDepth, { left: TREE_NODES })
    const toggle = el('input', {
      type: 'checkbox', id: 'tree-fold', checked: this.fold,
      onchange: () => {
        this.fold = /** @type {HTMLInputElement} */ (toggle).checked
        this.show(mask, expandAll)
      },
    })
    this.element.replaceChildren(el('div', { class: 'tree-tools' },
      toggle, el('label', { for: 'tree-fold' }, 'Show alike layers once (', el('code', { text: 'layers.{0..60}' }), ')')), ul)
  }

  /**
   * Draws children of `start.group` from `start.from` into `start.ul`, and the children of the
   * groups among them (open down to `openDepth`) while `budget` lasts: each group drawn reserves
   * its first TREE_CHILDREN children from it; the others draw theirs when opened. Iterative, so
   * depth costs no stack. `start.depth` is the group's level (the root's is 0).
   * @param {Fill} start @param {number} openDepth @param {{ left: number }} budget
   */
  #fill(start, openDepth, budget) {
    budget.left -= Math.min(start.group.children.length - start.from, TREE_CHILDREN)
    // Breadth first: the budget goes to the upper levels, which are what shows first.
    /** @type {Fill[]} */
    const queue = [start]
    for (let next = 0; next < queue.length; next++) {
      const { ul, group, depth, from } = queue[next]
      const end = Math.min(group.children.length, from + TREE_CHILDREN)
      for (let i = from; i < end; i++) {
        const c = group.children[i]
        if (c.row) {
          ul.append(this.#leaf(c))
          continue
        }
        const drawn = Math.min(c.children.length, TREE_CHILDREN)
        const eager = budget.left >= drawn
        if (eager) budget.left -= drawn
        // Past INDENTED_LEVELS, levels indent by a few pixels only: 64 full steps are wider than the panel.
        const list = el('ul', { class: depth + 1 >= INDENTED_LEVELS ? 'tree-deep' : undefined })
        const details = el('details', { open: eager && depth < openDepth, class: c.repeat ? 'tree-repeat' : undefined },
          el('summary', {},
            el('span', { class: 'tree-name mono' }, ...visible(c.name)),
            el('span', { class: 'tree-meta' }, groupMeta(c), ' · ', this.#params(c)),
            this.#size(c)),
          list)
        ul.append(el('li', {}, details))
        if (c.repeat) list.append(this.#repeatNote(c, list, depth + 1, openDepth))
        const fill = { ul: list, group: c, depth: depth + 1, from: 0 }
        if (eager) queue.push(fill)
        else {
          // Past the budget: drawn when first opened, with a budget of its own.
          const onToggle = () => {
            if (!/** @type {HTMLDetailsElement} */ (details).open) return
            details.removeEventListener('toggle', onToggle)
            this.#fill(fill, openDepth, { left: TREE_NODES })
          }
          details.addEventListener('toggle', onToggle)
        }
      }
      if (end < group.children.length) ul.append(this.#more({ ul, group, depth, from: end }, openDepth))
    }
  }

  /**
   * The first line inside a folded run: what it stands for, and a button that lists its groups
   * one by one instead (each drawn as any group).
   * @param {TreeNode} run @param {HTMLElement} list its <ul> @param {number} depth @param {number} openDepth
   */
  #repeatNote(run, list, depth, openDepth) {
    const repeat = /** @type {import('../../js/name-tree.js').Repeat} */ (run.repeat)
    const count = repeat.members.length
    // `experts.{0..383}`: each member is named by the prefix and its number.
    const prefix = run.name.slice(0, run.name.lastIndexOf('{'))
    const item = el('li', { class: 'tree-repeat-note' },
      el('span', { class: 'muted' }, `${formatCount(count)} alike, each as ${escapeInvisible(repeat.members[0].path)} below: `),
      el('button', {
        type: 'button', class: 'link', text: `list the ${formatCount(count)} one by one`,
        onclick: () => {
          /** @type {TreeNode} */
          const each = { ...run, children: repeat.members.map((m) => ({ ...m, name: `${prefix}${m.name}` })) }
          delete each.repeat
          list.replaceChildren()
          this.#fill({ ul: list, group: each, depth, from: 0 }, openDepth, { left: TREE_NODES })
          list.closest('details')?.classList.remove('tree-repeat')
        },
      }))
    return item
  }

  /** The line under a group's first children: how many more, and a button to draw them. @param {Fill} next @param {number} openDepth */
  #more(next, openDepth) {
    const rest = next.group.children.length - next.from
    const item = el('li', { class: 'tree-more' },
      el('span', { class: 'muted', text: `${formatCount(rest)} more${next.depth === 0 ? '' : ` in ${escapeInvisible(next.group.name)}`}: filter to narrow them down, or ` }),
      el('button', {
        type: 'button', class: 'link', text: `show ${formatCount(Math.min(rest, TREE_CHILDREN))} more`,
        onclick: () => {
          item.remove()
          this.#fill(next, openDepth, { left: TREE_NODES })
        },
      }))
    return item
  }

  /**
   * A group's parameter count, as `inspect --tree` gives it; while some of its tensors' shard
   * headers are pending, the count of those read so far marked ≥ (… when none is).
   * @param {TreeNode} g
   */
  #params(g) {
    if (!Number.isNaN(g.parameters)) {
      return el('span', { class: 'tree-params', dataset: { parameters: String(g.parameters), path: g.path },
        title: `${formatCount(g.parameters)} parameters`, text: `${compactCount(g.parameters)} params` })
    }
    const k = this.#known(g)
    return el('span', {
      class: 'tree-params tree-params-partial', dataset: { parameters: String(k.parameters), pending: String(k.pending), path: g.path },
      title: `${formatCount(k.parameters)} parameters in the tensors whose shard headers are read; ${formatCount(k.pending)} ${k.pending === 1 ? 'tensor is' : 'tensors are'} not counted yet`,
      text: k.parameters > 0 ? `≥ ${compactCount(k.parameters)} params` : `${UNKNOWN} params`,
    })
  }

  /** A group's size; while some of its tensors' shard headers are pending, that of the others marked ≥. @param {TreeNode} g */
  #size(g) {
    if (!Number.isNaN(g.byteLength)) return el('span', { class: 'tree-size', text: formatBytes(g.byteLength) })
    const k = this.#known(g)
    return el('span', { class: 'tree-size', dataset: { bytes: String(k.byteLength) }, text: k.byteLength > 0 ? `≥ ${formatBytes(k.byteLength)}` : UNKNOWN })
  }

  /** The totals of a group's tensors whose shard headers are read. @param {TreeNode} g */
  #known(g) {
    this.known ??= knownTotals(this.root)
    let k = this.known.get(g)
    if (!k) {
      // A group outside the tree drawn first (a folded run listed one by one): counted on its own.
      for (const [n, v] of knownTotals(g)) this.known.set(n, v)
      k = /** @type {import('../../js/name-tree.js').KnownTotals} */ (this.known.get(g))
    }
    return k
  }

  /** @param {TreeNode} n a tensor */
  #leaf(n) {
    const r = /** @type {Row} */ (n.row)
    const leaf = el('button', {
      type: 'button', class: 'tree-leaf', dataset: { name: r.name }, title: escapeInvisible(r.name),
      'aria-current': !this.selectedPart && r.name === this.selected ? 'true' : undefined,
    }, el('span', { class: 'tree-name mono' },
      n.joined ? el('span', {
        class: 'tree-joined', text: JOINED_MARK,
        title: `Deeper than ${MAX_TREE_DEPTH} levels: the rest of the name is shown as one node`,
      }) : null,
      ...visible(n.name)),
    r.quant
      ? el('span', { class: 'tree-meta mono' }, schemeBadge(r.quant.scheme), ` ${formatShape(r.shape)}`)
      : el('span', { class: 'tree-meta mono', text: r.pending ? pendingMark(r) : `${r.dtype} ${formatShape(r.shape)}` }),
    el('span', { class: 'tree-size', text: r.pending ? pendingMark(r) : formatBytes(r.byteLength) }))
    if (!r.quant) return el('li', {}, leaf)
    const parts = r.quant.parts
    return el('li', {}, leaf, el('details', { class: 'tree-parts', open: parts.some((p) => this.selectedPart && p.name === this.selected) },
      el('summary', {}, el('span', { class: 'tree-name muted', text: `${parts.length} stored ${parts.length === 1 ? 'part' : 'parts'}` })),
      el('ul', {}, parts.map((p) => el('li', {}, el('button', {
        type: 'button', class: 'tree-leaf tree-part', dataset: { part: p.name }, title: escapeInvisible(p.name),
        'aria-current': this.selectedPart && p.name === this.selected ? 'true' : undefined,
      }, el('span', { class: 'tree-name mono' }, el('span', { class: 'part-role', text: p.role ?? '' }), ...visible(p.name)),
      el('span', { class: 'tree-meta mono', text: `${p.dtype} ${formatShape(p.shape)}` }),
      el('span', { class: 'tree-size', text: formatBytes(p.byteLength) })))))))
  }

  /** @param {string | null} name @param {boolean} [part] a quantized weight's part */
  select(name, part = false) {
    this.selected = name
    this.selectedPart = part
    for (const b of this.element.querySelectorAll('button.tree-leaf')) {
      const d = /** @type {HTMLElement} */ (b).dataset
      if (part ? d.part === name : d.part === undefined && d.name === name) {
        b.setAttribute('aria-current', 'true')
        const fold = b.closest('details.tree-parts')
        if (fold) /** @type {HTMLDetailsElement} */ (fold).open = true
      } else {
        b.removeAttribute('aria-current')
      }
    }
  }
}

/** What a pending row shows for what its shard header gives. @param {Row} r */
function pendingMark(r) {
  return r.unreadable ? UNREADABLE : UNKNOWN
}

/** A group's count: its tensors, or for a folded run, how many alike groups of how many tensors. @param {TreeNode} g */
function groupMeta(g) {
  if (!g.repeat) return `${formatCount(g.tensors)} ${g.tensors === 1 ? 'tensor' : 'tensors'}`
  const count = g.repeat.members.length
  const each = g.tensors / count
  return `${formatCount(count)} × ${formatCount(each)} ${each === 1 ? 'tensor' : 'tensors'}`
}

/** 1,234,567 as "1.23 M", as the summary writes parameter counts. @param {number} n */
function compactCount(n) {
  if (n < 10_000) return formatCount(n)
  for (const [size, unit] of /** @type {const} */ ([[1e12, 'T'], [1e9, 'B'], [1e6, 'M'], [1e3, 'k']])) {
    if (n < size) continue
    const v = n / size
    return `${v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)} ${unit}`
  }
  return formatCount(n)
}

/**
 * How many levels can be open at once with at most `lines` groups and tensors showing (at least 1).
 * @param {TreeNode} root @param {number} lines
 */
function levelsWithin(root, lines) {
  let level = root.children
  let shown = level.length
  let depth = 1
  for (;;) {
    if (shown >= lines) return depth
    const next = level.flatMap((n) => n.children)
    if (next.length === 0 || shown + next.length > lines) return depth
    shown += next.length
    level = next
    depth++
  }
}
