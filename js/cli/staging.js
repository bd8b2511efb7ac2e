/**
 * How convert replaces a sharded set in one step, as far as a folder allows: the new set (its
 * shards and index) is written whole in a staging folder inside the output folder,
 * `.safetensors-convert-<pid>-<random>/`, then moved in. The old index is removed first, then
 * the shards are renamed into place, then the index, last: at every moment the folder holds the
 * old set whole, the new set whole, or no index (nothing opens). A failure, an interrupt or a
 * kill before that leaves the old set as it was; a kill leaves the staging folder, which the next
 * convert into that folder removes once its process is gone. Once the new index is in, the old
 * set's shards the new set does not replace (an older set of more shards) are removed
 * (removeOldShards): the files the old index named, in that folder, and no other.
 */
import { rmSync } from 'node:fs'
import { lstat, mkdtemp, open as fsOpen, readFile, readdir, rename, rm, rmdir, stat, unlink } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { SafetensorsError } from '../errors.js'
import { isRunning } from '../io/node-write.js'

const PREFIX = '.safetensors-convert-'
/** The file that marks a staging folder as convert's: a folder that holds files without it is never removed. */
const MARKER = 'STAGING'
const MARK = 'a sharded set being written by safetensors-wasm convert\n'
/** What a staging folder holds: its marker, shards, an index, writePlanned's temporary files. */
const STAGED = /^(STAGING|.*\.safetensors|.*\.index\.json|\..*\.tmp)$/

/** The staging folders of this process now: what removeStagingSync removes on an abrupt exit. */
const staging = new Set()

/**
 * A new staging folder in `folder`, marked as convert's.
 * @param {string} folder
 */
export async function makeStaging(folder) {
  const stage = await mkdtemp(join(folder, `${PREFIX}${process.pid}-`))
  staging.add(stage)
  await writeSynced(join(stage, MARKER), MARK)
  return stage
}

/** Removes a staging folder this process made (whatever is left in it). @param {string} stage */
export async function removeStaging(stage) {
  await rm(stage, { recursive: true, force: true })
  staging.delete(stage)
}

/** removeStaging for a process that must exit now (a second Ctrl-C). */
export function removeStagingSync() {
  for (const stage of staging) rmSync(stage, { recursive: true, force: true })
  staging.clear()
}

/**
 * Removes the staging folders a killed convert left in `folder`: only those named and marked as
 * convert's, whose process is gone, holding nothing but what convert writes there.
 * @param {string} folder
 */
export async function removeStaleStaging(folder) {
  const names = await readdir(folder).catch(() => [])
  for (const name of names) {
    const m = new RegExp(`^${PREFIX.replaceAll('.', '\\.')}(\\d+)-[A-Za-z0-9]{6}$`).exec(name)
    if (!m || isRunning(Number(m[1]))) continue
    const stage = join(folder, name)
    if (!(await lstat(stage).catch(() => null))?.isDirectory()) continue
    const inside = await readdir(stage).catch(() => [MARKER, '?'])
    if (!inside.every((n) => STAGED.test(n))) continue
    // Killed before its marker was whole, a staging folder holds nothing else yet.
    const marked = await readFile(join(stage, MARKER), 'utf8').catch(() => null) === MARK
    if (!marked && inside.some((n) => n !== MARKER)) continue
    for (const n of inside) if (n !== MARKER) await unlink(join(stage, n)).catch(() => {})
    await unlink(join(stage, MARKER)).catch(() => {})
    await rmdir(stage).catch(() => {})
  }
}

/**
 * Refuses a set's file that is a symbolic link: moving the set in would replace the link
 * itself, and writing through it would give up the single step (its target may be anywhere).
 * @param {string[]} paths
 */
export async function refuseLinks(paths) {
  for (const path of paths) {
    if ((await lstat(path).catch(() => null))?.isSymbolicLink()) {
      throw new SafetensorsError('InvalidArgument', `${path} is a symbolic link: convert moves a sharded set into its folder whole, ` +
        'which would replace the link; remove the link or choose another output folder')
    }
  }
}

/**
 * Moves the staged set into the index's folder: the old index out first (the old set stops
 * opening), then the shards over any of the same names, then the new index (the set opens).
 * @param {string} stage @param {string} index @param {string[]} shards
 */
export async function commitSet(stage, index, shards) {
  await unlink(index).catch((error) => { if (error.code !== 'ENOENT') throw error })
  for (const shard of shards) await rename(join(stage, shard), join(dirname(index), shard))
  await rename(join(stage, basename(index)), index)
}

/** An old index longer than this is not read for its shards (they are then left as they are). */
const MAX_OLD_INDEX_BYTES = 64 * 1024 * 1024

/**
 * The shard files the index at `index` names (its weight_map's values): those that are plain
 * `*.safetensors` file names in its folder. None when there is no index there, or one that is a
 * link, too long or not an index's JSON: then nothing is known to be the old set's.
 * @param {string} index
 * @returns {Promise<string[]>}
 */
export async function oldShards(index) {
  const s = await lstat(index).catch(() => null)
  if (!s?.isFile() || s.size > MAX_OLD_INDEX_BYTES) return []
  let doc
  try {
    doc = JSON.parse(await readFile(index, 'utf8'))
  } catch {
    return []
  }
  const map = doc?.weight_map
  if (map === null || typeof map !== 'object' || Array.isArray(map)) return []
  const names = new Set()
  for (const value of Object.values(map)) {
    if (typeof value === 'string' && /\.safetensors$/i.test(value) && !/[/\\\0]/.test(value) && basename(value) === value && !value.startsWith('.'))
      names.add(value)
  }
  return [...names]
}

/**
 * Removes the old set's shards the new set did not replace, after the new index `index` is in:
 * of `names` (oldShards's), those not in `keep`, not named by another index in the folder, that
 * are regular files (not links) in the index's folder and not one of the files of `protect` (the
 * input's; compared as files, so a link or a hard link to one is kept too). A file that cannot be
 * removed is left.
 * @param {string} index @param {string[]} names @param {string[]} keep @param {string[]} [protect]
 */
export async function removeOldShards(index, names, keep, protect = []) {
  if (names.length === 0) return
  const folder = dirname(index)
  const kept = new Set(keep)
  for (const other of await readdir(folder).catch(() => [])) {
    if (/\.index\.json$/i.test(other) && other !== basename(index))
      for (const name of await oldShards(join(folder, other))) kept.add(name)
  }
  const guarded = (await Promise.all(protect.map((path) => stat(path).catch(() => null)))).filter((s) => s !== null)
  for (const name of names) {
    if (kept.has(name)) continue
    const path = join(folder, name)
    const s = await lstat(path).catch(() => null)
    if (!s?.isFile()) continue
    if (guarded.some((g) => g.dev === s.dev && g.ino === s.ino)) continue
    await unlink(path).catch(() => {})
  }
}

/** Writes a new file and flushes it to disk. @param {string} path @param {string} text */
export async function writeSynced(path, text) {
  const fh = await fsOpen(path, 'wx')
  try {
    await fh.writeFile(text)
    await fh.sync()
  } finally {
    await fh.close()
  }
}
