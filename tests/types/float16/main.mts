// A project whose lib declares Float16Array (TypeScript's esnext.float16): F16 data is typed as
// a Float16Array or a Uint16Array (which one depends on the platform at run time), and the
// other data types as before. Compiled by tests/js/types-packaging.test.js in a folder of its
// own, the package linked into node_modules.
import { castTensor, openFile, type CastData, type MaybeFloat16Array, type TypedData } from 'safetensors-wasm'

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false
function expectType<A, B>(_proof: Equal<A, B>): void {}

expectType<MaybeFloat16Array, Float16Array>(true)
expectType<Extract<TypedData, Float16Array>, Float16Array>(true)
expectType<CastData<'F16'>, Uint16Array | Float16Array>(true)
expectType<CastData<'BF16'>, Uint16Array>(true)

export async function halves(path: string): Promise<number[]> {
  const f = await openFile(path)
  const t = await f.tensor('h')
  const data: TypedData = t.data
  // Where the platform has Float16Array, F16 values are numbers already.
  const values = data instanceof Float16Array ? Array.from(data) : Array.from(t.toFloat32())
  const cast = await castTensor(t, 'F16', { into: new Float16Array(t.elementCount) })
  const asHalves: Float16Array | Uint16Array = cast.data
  t.dispose()
  void asHalves
  return values
}
