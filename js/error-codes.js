/**
 * The codes of SafetensorsError, in one table: what each means and the usual fix. Apart from
 * errors.js so that a page that never lists them does not download the table.
 */

/**
 * Every code the package throws, with what it means and the usual fix. The README's table of
 * codes and the `ErrorCode` union in index.d.ts are checked against it by a test.
 * @type {Readonly<Record<string, Readonly<{ meaning: string, fix: string }>>>}
 */
export const ERROR_INFO = /* @__PURE__ */ deepFreeze({
  // The reference's verdicts on the bytes of a file.
  HeaderTooSmall: { meaning: 'the file is shorter than the 8-byte header length', fix: 'the file is truncated or empty' },
  HeaderTooLarge: { meaning: 'the header length is over 100,000,000 bytes', fix: 'not a safetensors file, or a corrupt one' },
  InvalidHeaderLength: { meaning: 'the header length points past the end of the file', fix: 'the file is truncated' },
  InvalidHeader: { meaning: 'the header is not valid UTF-8', fix: 'a corrupt file' },
  InvalidHeaderDeserialization: { meaning: 'the header is not the JSON safetensors expects', fix: 'a corrupt file, or one written by a broken writer' },
  InvalidOffset: { meaning: 'the tensors do not tile the data area exactly', fix: 'a corrupt file, or one written by a broken writer' },
  ValidationOverflow: { meaning: 'a shape or offset overflows 64 bits', fix: 'a corrupt file' },
  MisalignedSlice: { meaning: 'a sub-byte tensor (F4, F6) does not fill whole bytes', fix: 'a corrupt file; or slice on whole bytes' },
  TensorInvalidInfo: { meaning: 'a tensor\'s byte range does not match its shape and dtype', fix: 'a corrupt file' },
  MetadataIncompleteBuffer: { meaning: 'the tensors do not end where the file ends', fix: 'the file is truncated or has trailing bytes' },
  TensorNotFound: { meaning: 'no tensor by that name', fix: 'check `names`' },
  TooManySlices: { meaning: 'a slice has more dimensions than the tensor', fix: 'one index or range per dimension at most' },
  SliceOutOfRange: { meaning: 'a slice index is outside its dimension', fix: 'indices run from -d to d - 1' },
  InvalidSlice: { meaning: 'a slice is not written as the API takes it', fix: 'a string like "0, 2:5" or an array like [0, [2, 5]]' },
  // Not a safetensors file at all.
  NotSafetensors: { meaning: 'the bytes are an HTML page, a Git LFS pointer, XML or JSON', fix: 'on the Hub, a /resolve/ URL rather than /blob/; for an LFS pointer, `git lfs pull`' },
  // Sources and transport.
  UnsupportedSource: { meaning: 'open() cannot read what it was given', fix: 'a URL, a path (Node), a Blob, bytes or a ByteSource' },
  NotFound: { meaning: 'no file at that path or URL (HTTP 404 or 410)', fix: 'check the path or URL' },
  IoError: { meaning: 'the operating system could not read or write a file', fix: 'see the message (permissions, disk)' },
  HttpError: { meaning: 'the server answered with an error status (`status` holds it)', fix: '401/403: pass credentials (headers or token); 5xx: try later' },
  NetworkError: { meaning: 'no answer from the server (refused, DNS, certificate, CORS)', fix: 'the message names the cause' },
  ContentEncoded: { meaning: 'the server compressed a byte range (Content-Encoding)', fix: 'turn compression off for .safetensors on the server' },
  InvalidContentRange: { meaning: 'a ranged answer has a missing or wrong Content-Range', fix: 'cross-origin: the server must expose Content-Range' },
  RangeNotSupported: { meaning: 'the server ignores Range and sends whole files', fix: 'allowFullDownload: true, or a server that supports Range' },
  RangeNotSatisfiable: { meaning: 'the server refused a byte range (HTTP 416)', fix: 'the file may have changed: open it again' },
  SourceChanged: { meaning: 'the file changed between two reads (ETag, length)', fix: 'open it again' },
  ShortRead: { meaning: 'fewer bytes arrived than were asked for', fix: 'the connection broke or the file shrank: try again' },
  OutOfRange: { meaning: 'a read outside the source\'s bytes', fix: 'a ByteSource whose byteLength is wrong' },
  InvalidSource: { meaning: 'a ByteSource broke its contract (more bytes than asked, not a Uint8Array, a bad byteLength)', fix: 'read(offset, length) must give exactly `length` bytes as a Uint8Array' },
  Aborted: { meaning: 'the operation\'s signal was aborted', fix: '' },
  Closed: { meaning: 'the file was closed', fix: 'read before close()' },
  Disposed: { meaning: 'the tensor was disposed', fix: 'use it before dispose()' },
  OutOfMemory: { meaning: 'the wasm heap cannot hold what was asked for', fix: 'read less at once (a slice)' },
  InvalidArgument: { meaning: 'an argument or option of the wrong type or value', fix: 'see the message' },
  UnsupportedDtype: { meaning: 'the operation does not support this dtype', fix: 'see the dtype table' },
  NonFinite: { meaning: 'NaN or infinite values where finite ones were asked for', fix: 'the CLI\'s verify --finite' },
  // Sharded sets.
  InvalidIndex: { meaning: 'a *.index.json that is not a valid index', fix: 'it needs a "weight_map" object of strings' },
  UnsafeShardPath: { meaning: 'an index names a shard outside its folder', fix: 'shard paths must be plain relative paths' },
  ShardMissing: { meaning: 'a shard the index names is not there (not given, no file, HTTP 404)', fix: 'give or upload every shard' },
  IndexMismatch: { meaning: 'the index and a shard\'s header disagree', fix: 'the set was not written together' },
  KindMismatch: { meaning: 'openFile was given a sharded set, or openSharded a single file', fix: 'openSharded for an *.index.json or a repo of shards, openFile for one file; open takes either' },
  DeviceLimitExceeded: { meaning: 'a tensor is larger than the GPU device\'s buffer limits (maxBufferSize, maxStorageBufferBindingSize)', fix: 'request larger limits (requiredLimits) when creating the device, or upload slices' },
  DigestMismatch: { meaning: 'a file\'s SHA-256 is not the one expected (verify --sha256)', fix: 'a corrupt or partial download, or the hash of another revision or file' },
  // Quantized weights (docs/quantized.md).
  QuantPartMissing: { meaning: 'a quantized weight lacks a part its scheme needs (scales, zeros...)', fix: 'a shard missing from the index, or a checkpoint saved without it' },
  QuantPartInvalid: { meaning: 'a part of a quantized weight has the wrong dtype or shape for it', fix: 'a corrupt or hand-edited checkpoint; the message names the part' },
  QuantIndexOutOfRange: { meaning: 'a GPTQ g_idx puts an input in a group the scales do not have', fix: 'a corrupt checkpoint' },
  QuantStateInvalid: { meaning: 'a bitsandbytes quant-state JSON is unreadable or disagrees with the tensors', fix: 'a corrupt checkpoint' },
  QuantConfigMismatch: { meaning: 'the quantization config disagrees with the tensors (block, bits, group size, method)', fix: 'pass the quantization_config saved with these weights, or none' },
  NotQuantized: { meaning: 'dequantize() of a name that is not a quantized weight', fix: 'quantized() lists them; read plain tensors with tensor()' },
  UnsupportedQuantization: { meaning: 'a quantization variant this library does not decode', fix: 'see docs/quantized.md for what is decoded' },
  // Awkward arrays.
  AwkwardInvalidMetadata: { meaning: 'the form or length in the metadata is unreadable', fix: 'a file not written by ak.to_safetensors' },
  AwkwardInvalidForm: { meaning: 'the form is not a valid awkward form', fix: 'a file not written by ak.to_safetensors' },
  AwkwardUnsupportedType: { meaning: 'a form node type this reader does not support', fix: 'see the README' },
  AwkwardMissingBuffer: { meaning: 'a buffer the form names is missing', fix: 'a corrupt file' },
  AwkwardDtypeMismatch: { meaning: 'a buffer\'s dtype differs from the form\'s', fix: 'a corrupt file' },
  AwkwardBufferTooShort: { meaning: 'a buffer holds fewer items than the form needs', fix: 'a corrupt file' },
  AwkwardDecreasingOffsets: { meaning: 'list offsets decrease', fix: 'a corrupt file' },
  AwkwardOutOfBounds: { meaning: 'an offset or index points outside its buffer', fix: 'a corrupt file' },
  AwkwardIndexOutOfRange: { meaning: 'at(i) or slice(i, j) outside the array', fix: 'indices run from -length to length - 1' },
  AwkwardFieldNotFound: { meaning: 'field(name) of a record without that field', fix: 'see the array\'s type' },
})

/** Every code SafetensorsError.code can hold, frozen. */
export const ERROR_CODES = /* @__PURE__ */ Object.freeze(Object.keys(ERROR_INFO))

/** @template {object} T @param {T} object @returns {Readonly<T>} */
function deepFreeze(object) {
  for (const value of Object.values(object)) if (typeof value === 'object' && value !== null) Object.freeze(value)
  return Object.freeze(object)
}
