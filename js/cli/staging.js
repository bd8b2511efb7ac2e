/**
 * How convert replaces a sharded set in one step, as far as a folder allows: the new set (its
 * shards and index) is written whole in a staging folder inside the output folder,
 * `.safetensors-convert-<pid>-<random>/`, then moved in. The old index is removed first, then
 * the shards are renamed into place, then the index, last: at every moment the folder holds the
 * old set whole, the new set whole, or no index (nothing opens). A failure, an interrupt or a
 * kill before that leaves the old set as it was; a kill leaves the staging folder, which the next
 * convert into that folder removes once its process is gone.
 */
import { rmSync } from 'node:fs'
import { lstat, mkdtemp, open as fsOpen, readFile, readdir, rename, rm, rmdir, unlink } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { SafetensorsError } from '../errors.js'

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

/** Whether a process runs (this one included: another convert of it may be writing). @param {number} pid */
function isRunning(pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return /** @type {NodeJS.ErrnoException} */ (error).code !== 'ESRCH'
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
