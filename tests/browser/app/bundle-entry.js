/**
 * The bundled app: imports the package by name, as an app does, and lets esbuild resolve it
 * (platform 'browser': package.json's "default" export, js/index.js). The test bundles this file
 * and serves bundled.html, which loads nothing else.
 */
import { open } from 'safetensors-wasm'
import { PATHS, publish, readEvery, readSlices } from './checks.js'

const data = new URLSearchParams(location.search).get('data') ?? location.origin
publish(async () => ({
  single: await readEvery(open, data + PATHS.single),
  slices: await readSlices(open, data + PATHS.slices),
}))
