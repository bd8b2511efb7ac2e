// A Node project without the DOM lib (`lib: ["es2022"]`, `types: ["node"]`, skipLibCheck off):
// every type the package's .d.ts use (headers, RequestInit, Response, Blob, ReadableStream, the
// GPU device) resolves from @types/node or from the package itself. Without the esnext.float16
// lib, the data types have no Float16Array. Compiled by tests/js/types-packaging.test.js in a
// folder of its own, the package linked into node_modules.
import {
  blobSource, open, openFile, serializeStream, urlSource,
  type CastData, type GPUDeviceLike, type HttpOptions, type MaybeFloat16Array, type TypedData,
} from 'safetensors-wasm'

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false
function expectType<A, B>(_proof: Equal<A, B>): void {}

export async function remote(token: string, device: GPUDeviceLike): Promise<void> {
  const options: HttpOptions = {
    headers: { Authorization: `Bearer ${token}` },
    requestInit: { keepalive: false },
    fetch: (input, init) => fetch(input, init),
  }
  const withHeaders: HttpOptions = { headers: new Headers([['x-a', 'b']]) }
  const withPairs: HttpOptions = { headers: [['x-a', 'b']] }
  const f = await openFile('https://example.org/model.safetensors', options)
  await urlSource('https://example.org/model.safetensors', withHeaders)
  await open(blobSource(new Blob([new Uint8Array(8)])), withPairs)
  const stream: ReadableStream<Uint8Array> = await serializeStream([await f.tensor('w')])
  await f.toGPU(device, ['w'])
  void stream
}

expectType<MaybeFloat16Array, never>(true)
expectType<TypedData, Float32Array | Float64Array | Uint16Array | Int16Array | Int32Array | Uint32Array |
  BigInt64Array | BigUint64Array | Int8Array | Uint8Array>(true)
expectType<CastData<'F16'>, Uint16Array>(true)
