import { redactError, redactUrl } from './redact.js'

/**
 * Every failure of this library is a SafetensorsError. `code` is one of ERROR_CODES: the
 * reference implementation's variant name for format errors (docs/format.md, "Reader rules"),
 * or a transport or API code (HttpError, RangeNotSupported, SourceChanged, Aborted, ...).
 * Secrets in the URLs its message, body and causes quote are masked (redactUrl), here, so that
 * no message needs to remember to.
 */

export class SafetensorsError extends Error {
  /**
   * @param {string} code
   * @param {string} message
   * @param {{ tensor?: string | null, offset?: number | null, status?: number | null, body?: string | null,
   *   cause?: unknown }} [details]
   */
  constructor(code, message, details = {}) {
    redactError(details.cause)
    super(redactUrl(message), details.cause === undefined ? undefined : { cause: details.cause })
    this.name = 'SafetensorsError'
    /** @type {string} */
    this.code = code
    /** @type {string | null} the tensor concerned, when there is one */
    this.tensor = details.tensor ?? null
    /** @type {number | null} absolute byte offset in the file, when known */
    this.offset = details.offset ?? null
    /** @type {number | null} the HTTP status, for errors that come from an HTTP answer */
    this.status = details.status ?? null
    /** @type {string | null} the start (200 characters) of an HTTP error's text body */
    this.body = details.body == null ? null : redactUrl(details.body)
  }
}

/**
 * Turns the core's error (st::errorJson: code, tensor, message, offset) into a SafetensorsError.
 * @param {string} json
 */
export function fromCoreError(json) {
  /** @type {{ code: string, tensor: string, message: string, offset: number }} */
  const info = JSON.parse(json)
  return new SafetensorsError(info.code, info.message, {
    tensor: info.tensor === '' ? null : info.tensor,
    offset: info.offset,
  })
}

/**
 * The error for an aborted operation, keeping the signal's reason as the cause.
 * @param {AbortSignal | undefined} signal
 */
export function abortError(signal) {
  return new SafetensorsError('Aborted', 'the operation was aborted', { cause: signal?.reason })
}

/** @param {AbortSignal | undefined} signal */
export function throwIfAborted(signal) {
  if (signal?.aborted) throw abortError(signal)
}
