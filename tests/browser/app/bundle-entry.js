/**
 * The bundled app: imports the package by name, as an app does, and lets esbuild resolve it
 * (platform 'browser': package.json's "default" export, js/index.js). The test bundles this file
 * and serves bundled.html, which loads nothing else (but the bundle's chunks: the quantization
 * kernels, dist/safetensors_quant*.mjs, are chunks of their own, loaded by the first dequantize).
 */
import { open } from 'safetensors-wasm'
import { PATHS, digestOf, publish, readEvery, readQuantized, readSlices, readStreamed } from './checks.js'

const data = new URLSearchParams(location.search).get('data') ?? location.origin
publish(async () => ({
  single: await readEvery(open, data + PATHS.single),
  slices: await readSlices(open, data + PATHS.slices),
  // Quantized files, dequantized: the kernels are chunks of the bundle, loaded on first use.
  quant: await readQuantized(open, data, digestOf),
  // The streaming entries: their modules (f.stats's, f.digest's, the stream reader) are chunks too.
  stream: await readStreamed(open, data),
}))
