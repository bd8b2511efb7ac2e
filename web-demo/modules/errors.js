/**
 * Every failure as a message a person can act on: a title, what to do about it, and the
 * library's own details (code, tensor, byte offset, message) for reference.
 */
import { SafetensorsError } from '../../js/index.js'
import { el, visible } from './dom.js'
import { formatCount } from './format.js'

/** Codes of docs/format.md's "Reader rules": the bytes are not a valid safetensors file. */
const FORMAT_HINTS = /** @type {Record<string, string>} */ ({
  HeaderTooSmall: 'The file is shorter than the 8 bytes that give the header length.',
  HeaderTooLarge: 'The first 8 bytes claim a header over 100 MB: this is probably not a safetensors file.',
  InvalidHeaderLength: 'The header length in the first 8 bytes points past the end of the file: it is truncated, or not a safetensors file.',
  InvalidHeader: 'The header is not valid UTF-8 text.',
  InvalidHeaderDeserialization: 'The header is not the JSON object safetensors expects (a syntax error, a missing or mistyped field, an unknown dtype, a duplicate key).',
  InvalidOffset: 'The tensors do not tile the data area exactly: there is a gap or an overlap between them.',
  ValidationOverflow: 'A shape is so large that its size overflows 64 bits.',
  MisalignedSlice: 'A tensor of a sub-byte dtype does not fill whole bytes.',
  TensorInvalidInfo: 'A tensor\'s byte range does not match its shape and dtype.',
  MetadataIncompleteBuffer: 'The tensors do not end where the file ends: it is truncated or has trailing bytes.',
})

/**
 * @param {unknown} error
 * @returns {{ title: string, hint: string, code: string | null, details: string[], message: string }}
 */
export function describeError(error) {
  if (!(error instanceof SafetensorsError)) {
    const message = error instanceof Error ? error.message : String(error)
    return { title: 'Something went wrong', hint: 'This is a bug in the inspector; the browser console may say more.', code: null, details: [], message }
  }
  const details = []
  if (error.tensor !== null) details.push(`tensor ${JSON.stringify(error.tensor)}`)
  if (error.offset !== null) details.push(`at byte ${formatCount(error.offset)}`)
  const base = { code: error.code, details, message: error.message }
  const status = error.status === null ? null : String(error.status)
  switch (error.code) {
    case 'ShardMissing':
      return { ...base, title: 'A shard is missing', hint: 'The index names a shard that is not there. Locally: choose or drop the sharded index together with every shard it names; on a server: every shard must sit next to the index.' }
    case 'NotFound':
      return { ...base, title: status ? `Not found (HTTP ${status})` : 'Not found', hint: 'The server has no file at this URL. Check the address (on the Hugging Face Hub, use a /resolve/ link, or the repo id field).' }
    case 'NotSafetensors':
      return { ...base, title: 'This is not a safetensors file', hint: 'The message below says what it is instead and how to get the file itself.' }
    case 'ContentEncoded':
      return { ...base, title: 'The server compresses byte ranges', hint: 'It sends ranges of a compressed body, which are not ranges of the file. The server must not compress .safetensors files (the message names the setting).' }
    case 'HttpError':
      if (status === '401' || status === '403')
        return { ...base, title: `Access denied (HTTP ${status})`, hint: 'This file needs permission: paste an access token under “Access token for gated or private files” and open it again.' }
      return { ...base, title: `The server answered with an error${status ? ` (HTTP ${status})` : ''}`, hint: 'Try again later, or check the URL.' }
    case 'NetworkError':
      return { ...base, title: 'Could not reach the server', hint: 'Check the URL and your connection. A server on another site must also allow this page to read it (CORS: Access-Control-Allow-Origin, and the Range and Authorization request headers).' }
    case 'InvalidContentRange':
      if (/Expose-Headers/i.test(error.message))
        return { ...base, title: 'The server hides the file length from this page (CORS)', hint: 'Its answer has no readable Content-Range header. A server on another origin must send “Access-Control-Expose-Headers: Content-Range, ETag, Content-Length”; without it the browser hides those headers from scripts.' }
      return { ...base, title: 'The server answered a range request wrongly', hint: 'Its Content-Range does not match what was asked for. The file cannot be read in parts from this server.' }
    case 'RangeNotSupported':
      return { ...base, title: 'The server ignores range requests', hint: 'It sends the whole file to every request instead of just the bytes asked for, which for a file this large would mean downloading all of it. Use a server that supports HTTP Range requests (the Hugging Face Hub and most static hosts do).' }
    case 'RangeNotSatisfiable':
      return { ...base, title: 'The server refused the byte range', hint: 'It says the range asked for is outside the file: the file may have changed. Open it again.' }
    case 'SourceChanged':
      return { ...base, title: 'The file changed while it was being read', hint: 'Open it again to read the new version.' }
    case 'ShortRead':
      return { ...base, title: 'The download ended early', hint: 'The connection broke or the server sent fewer bytes than promised. Try again.' }
    case 'InvalidIndex':
      return { ...base, title: 'Not a valid sharded index', hint: 'A *.index.json must be a JSON object with a "weight_map" from tensor names to shard files.' }
    case 'UnsafeShardPath':
      return { ...base, title: 'The index names a shard outside its folder', hint: 'Shard paths must be plain relative paths next to the index; this one was refused before any request.' }
    case 'TooManySlices': case 'SliceOutOfRange': case 'InvalidSlice':
      return { ...base, title: 'Invalid slice', hint: 'Write one index or start:stop range per leading dimension, e.g. “0:16, :” or “3, 0:64”. Stops are exclusive; negative numbers count from the end.' }
    case 'OutOfMemory':
      return { ...base, title: 'Too large to load in the browser', hint: 'Choose a smaller slice of this tensor.' }
    case 'UnsupportedDtype':
      return { ...base, title: 'These values cannot be decoded', hint: 'F6 values are packed bits whose layout no writer fixes yet.' }
    case 'UnsupportedSource':
      return { ...base, title: 'This cannot be opened here', hint: 'Open an http(s) URL, a local file, or the sample.' }
    case 'TensorNotFound':
      return { ...base, title: 'No such tensor', hint: 'The file has no tensor by this name.' }
    case 'InvalidArgument':
      if (/is not a Hub address/.test(error.message))
        return { ...base, title: 'Not a Hugging Face repo id', hint: 'Type org/repo, org/repo@revision or org/repo/path/to/file.safetensors (datasets/org/repo/… for a dataset); a revision with a slash is URL-encoded: @refs%2Fpr%2F1.' }
      return { ...base, title: 'Could not read the file', hint: '' }
    default:
      if (error.code in FORMAT_HINTS)
        return { ...base, title: 'Not a valid safetensors file', hint: FORMAT_HINTS[error.code] }
      return { ...base, title: 'Could not read the file', hint: '' }
  }
}

/** The file an error came from, where the page knows it better than the error (a shard). @type {WeakMap<object, string>} */
const FILES = new WeakMap()

/**
 * Notes that `error` came from reading `file` (the first note wins: the innermost), and returns it.
 * @template T @param {T} error @param {string} file @returns {T}
 */
export function blame(error, file) {
  if (typeof error === 'object' && error !== null && !FILES.has(error)) FILES.set(error, file)
  return error
}

/** The line that names the file an error came from. @param {string} file */
function fileLine(file) {
  return el('p', { class: 'error-file' }, el('span', { class: 'muted', text: 'File: ' }), el('span', { class: 'mono' }, ...visible(file)))
}

/**
 * The error card's content.
 * @param {unknown} error
 * @param {() => void} onDismiss
 * @param {string | null} [file] the file being read, named unless the error was blamed on another
 */
export function errorCard(error, onDismiss, file = null) {
  const d = describeError(error)
  const named = (typeof error === 'object' && error !== null ? FILES.get(error) : undefined) ?? file
  return /** @type {HTMLElement[]} */ ([
    el('div', { class: 'error-head' },
      el('strong', { class: 'error-title', text: d.title }),
      el('button', { type: 'button', class: 'icon-button', 'aria-label': 'Dismiss this message', onclick: onDismiss, text: '×' })),
    named ? fileLine(named) : null,
    d.hint ? el('p', { class: 'error-hint', text: d.hint }) : null,
    // Details and message quote names from the file: invisible characters as marked escapes.
    el('p', { class: 'error-details' },
      d.code ? el('code', { class: 'error-code', text: d.code }) : null,
      d.details.length ? el('span', {}, ...visible(d.details.join(', '))) : null),
    el('p', { class: 'error-message mono' }, ...visible(d.message, { multiline: true })),
  ].filter((node) => node !== null))
}

/** Failing shards listed at most; a line says how many more. */
const LISTED_SHARDS = 20

/**
 * The error card for a sharded set some of whose shard headers could not be read: how many,
 * and each one with its code and message. The names of their tensors stay listed (from the index).
 * @param {Map<string, unknown>} failed shard path -> what reading it threw
 * @param {number} total the set's shards
 * @param {() => void} onDismiss
 * @param {string | null} [index] the set's index, named on the card
 */
export function shardFailuresCard(failed, total, onDismiss, index = null) {
  const n = failed.size
  const items = [...failed].sort((a, b) => (a[0] < b[0] ? -1 : 1)).slice(0, LISTED_SHARDS).map(([path, error]) => {
    const d = describeError(error)
    return el('li', { class: 'shard-failure' },
      el('span', { class: 'mono' }, ...visible(path)), ' ',
      d.code ? el('code', { class: 'error-code', text: d.code }) : null, ' ',
      el('span', { class: 'error-message' }, ...visible(d.message)))
  })
  if (n > LISTED_SHARDS) items.push(el('li', { class: 'muted', text: `and ${formatCount(n - LISTED_SHARDS)} more` }))
  return /** @type {HTMLElement[]} */ ([
    el('div', { class: 'error-head' },
      el('strong', { class: 'error-title', text: `${formatCount(n)} of ${formatCount(total)} shard ${total === 1 ? 'header' : 'headers'} could not be read` }),
      el('button', { type: 'button', class: 'icon-button', 'aria-label': 'Dismiss this message', onclick: onDismiss, text: '×' })),
    index ? fileLine(index) : null,
    el('p', { class: 'error-hint', text: `Their tensors are still listed, by name, from the index; their dtype, shape and size are unknown. ${n === 1 ? 'It' : 'Each'} failed with:` }),
    el('ul', { class: 'shard-failures' }, items),
  ].filter((node) => node !== null))
}
