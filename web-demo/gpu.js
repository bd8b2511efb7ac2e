/**
 * The WebGPU example page (gpu.html): opens a file (URL, chosen or dropped), uploads one 2-D
 * tensor with f.toGPU(device, [name], { dtype: 'F32' }) (streamed through the heap, chunk by
 * chunk, into a storage buffer), finds its finite minimum and maximum with a compute pass and
 * draws it as a heatmap with a render pass: every pixel reads the element under it.
 */
import { open } from '../js/index.js'

const SAMPLE = '../sample/tiny-llama.safetensors'
const $ = (/** @type {string} */ id) => /** @type {any} */ (document.getElementById(id))

/** One workgroup reduces the buffer: each invocation scans a stride, then a tree in shared memory. */
const REDUCE = /* wgsl */ `
@group(0) @binding(0) var<storage, read> values: array<f32>;
@group(0) @binding(1) var<storage, read_write> range: array<f32, 2>;
var<workgroup> lo: array<f32, 256>;
var<workgroup> hi: array<f32, 256>;
@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) i: u32) {
  var a = 3.4e38;
  var b = -3.4e38;
  let n = arrayLength(&values);
  for (var k = i; k < n; k += 256u) {
    let x = values[k];
    if (x == x && abs(x) <= 3.4e38) { a = min(a, x); b = max(b, x); }
  }
  lo[i] = a;
  hi[i] = b;
  for (var s = 128u; s > 0u; s >>= 1u) {
    workgroupBarrier();
    if (i < s) { lo[i] = min(lo[i], lo[i + s]); hi[i] = max(hi[i], hi[i + s]); }
  }
  if (i == 0u) { range[0] = lo[0]; range[1] = hi[0]; }
}`

/** A full-screen triangle; each fragment reads the element under it and maps it to a colour. */
const DRAW = /* wgsl */ `
struct Shape { rows: u32, cols: u32, width: f32, height: f32 }
@group(0) @binding(0) var<storage, read> values: array<f32>;
@group(0) @binding(1) var<storage, read> range: array<f32, 2>;
@group(0) @binding(2) var<uniform> shape: Shape;
@vertex
fn vs(@builtin(vertex_index) v: u32) -> @builtin(position) vec4f {
  let p = array(vec2f(-1.0, -1.0), vec2f(3.0, -1.0), vec2f(-1.0, 3.0));
  return vec4f(p[v], 0.0, 1.0);
}
fn colour(t: f32) -> vec3f {
  // A perceptual ramp from dark blue through teal and green to yellow (close to viridis).
  let c0 = vec3f(0.267, 0.005, 0.329);
  let c1 = vec3f(0.128, 0.567, 0.551);
  let c2 = vec3f(0.993, 0.906, 0.144);
  return select(mix(c1, c2, (t - 0.5) * 2.0), mix(c0, c1, t * 2.0), t < 0.5);
}
@fragment
fn fs(@builtin(position) pos: vec4f) -> @location(0) vec4f {
  let row = min(u32(pos.y / shape.height * f32(shape.rows)), shape.rows - 1u);
  let col = min(u32(pos.x / shape.width * f32(shape.cols)), shape.cols - 1u);
  let x = values[row * shape.cols + col];
  if (x != x) { return vec4f(1.0, 0.0, 1.0, 1.0); }
  let span = max(range[1] - range[0], 1e-30);
  return vec4f(colour(clamp((x - range[0]) / span, 0.0, 1.0)), 1.0);
}`

/** @type {any} the opened file */
let file = null
/** @type {any} */
let device = null
/** @type {AbortController | null} */
let task = null

/** @param {string} message */
function showError(message) {
  $('gpu-error').textContent = message
  $('gpu-error').hidden = message === ''
}

/** @param {string} text @param {number | null} [fraction] */
function status(text, fraction = null) {
  $('gpu-status').hidden = text === ''
  $('gpu-status-text').textContent = text
  const bar = $('gpu-progress')
  if (fraction === null) bar.removeAttribute('value')
  else bar.value = fraction
}

async function getDevice() {
  if (device) return device
  const gpu = /** @type {any} */ (navigator).gpu
  if (!gpu) throw new Error('this browser has no WebGPU (navigator.gpu): try a recent Chrome or Edge, or Firefox Nightly')
  const adapter = await gpu.requestAdapter()
  if (!adapter) throw new Error('WebGPU found no adapter (no usable GPU, or it is blocklisted)')
  // As much as the adapter allows: one tensor is one buffer.
  device = await adapter.requestDevice({ requiredLimits: {
    maxBufferSize: adapter.limits.maxBufferSize, maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize } })
  device.lost.then(() => { device = null })
  return device
}

/** @param {string | Blob} src */
async function openFile(src) {
  showError('')
  task?.abort()
  task = new AbortController()
  status('Opening…')
  try {
    await file?.close()
    file = await open(src, { signal: task.signal })
    // 2-D tensors, and quantized weights (their logical shapes) which toGPU dequantizes.
    const quantized = await file.quantized()
    const parts = new Set(quantized.flatMap((/** @type {any} */ w) => Object.values(w.parts)))
    /** @type {{ name: string, shape: number[], dtype: string }[]} */
    const list = quantized.filter((/** @type {any} */ w) => w.shape.length === 2).map((/** @type {any} */ w) => ({ name: w.name, shape: w.shape, dtype: w.scheme }))
    for (const name of file.names) {
      if (parts.has(name) || list.some((t) => t.name === name)) continue
      const info = await file.info(name)
      if (info.shape.length === 2 && !/^(C64|F6_)/.test(info.dtype)) list.push({ name, shape: info.shape.map(Number), dtype: info.dtype })
    }
    const select = $('gpu-tensor')
    select.replaceChildren(...list.map((t) => {
      const option = document.createElement('option')
      option.value = t.name
      option.textContent = `${t.name}  ${t.dtype} [${t.shape.join(', ')}]`
      return option
    }))
    $('gpu-view').hidden = false
    $('gpu-info').textContent = list.length === 0 ? 'This file has no 2-D tensor.' : `${list.length} 2-D tensors.`
    status('')
  } catch (error) {
    status('')
    showError(describe(error))
  }
}

/** @param {string} name */
async function draw(name) {
  showError('')
  task?.abort()
  const controller = new AbortController()
  task = controller
  /** @type {any} */
  let buffer = null
  try {
    const dev = await getDevice()
    status(`Uploading ${name}…`, 0)
    const t0 = performance.now()
    const map = await file.toGPU(dev, [name], { dtype: 'F32', signal: controller.signal,
      onProgress: (/** @type {{ loaded: number, total: number }} */ p) => status(`Uploading ${name}… ${(p.loaded / 2 ** 20).toFixed(1)} MiB`, p.total ? p.loaded / p.total : null) })
    buffer = map.get(name)
    const ms = performance.now() - t0
    const quantized = (await file.quantized()).find((/** @type {any} */ w) => w.name === name)
    const [rows, cols] = quantized ? quantized.shape : (await file.info(name)).shape.map(Number)
    status('Drawing…')
    await render(dev, buffer, rows, cols)
    const range = await readRange(dev)
    $('gpu-info').textContent = `${name}: [${rows}, ${cols}] as F32, ${(buffer.size / 2 ** 20).toFixed(1)} MiB uploaded in ${ms.toFixed(0)} ms; ` +
      `colours from ${range[0].toPrecision(4)} to ${range[1].toPrecision(4)} (finite values; NaN in magenta).`
    status('')
  } catch (error) {
    status('')
    showError(describe(error))
  } finally {
    buffer?.destroy()
    if (task === controller) task = null
  }
}

/** @type {any} the last min/max buffer, read back for the caption */
let rangeBuffer = null

/** @param {any} dev @param {any} values @param {number} rows @param {number} cols */
async function render(dev, values, rows, cols) {
  const canvas = $('gpu-canvas')
  // At most 512 pixels on the long side, the tensor's aspect ratio kept (within 1:8).
  const aspect = Math.min(8, Math.max(1 / 8, cols / rows))
  canvas.width = Math.round(aspect >= 1 ? 512 : 512 * aspect)
  canvas.height = Math.round(aspect >= 1 ? 512 / aspect : 512)
  const context = canvas.getContext('webgpu')
  const format = /** @type {any} */ (navigator).gpu.getPreferredCanvasFormat()
  context.configure({ device: dev, format, alphaMode: 'opaque' })
  const U = /** @type {any} */ (globalThis).GPUBufferUsage
  rangeBuffer?.destroy()
  rangeBuffer = dev.createBuffer({ size: 8, usage: U.STORAGE | U.COPY_SRC })
  const uniform = dev.createBuffer({ size: 16, usage: U.UNIFORM | U.COPY_DST })
  const u = new ArrayBuffer(16)
  new Uint32Array(u, 0, 2).set([rows, cols])
  new Float32Array(u, 8, 2).set([canvas.width, canvas.height])
  dev.queue.writeBuffer(uniform, 0, u)
  const reduce = dev.createComputePipeline({ layout: 'auto', compute: { module: dev.createShaderModule({ code: REDUCE }), entryPoint: 'main' } })
  const module = dev.createShaderModule({ code: DRAW })
  const drawPipeline = dev.createRenderPipeline({ layout: 'auto', vertex: { module, entryPoint: 'vs' },
    fragment: { module, entryPoint: 'fs', targets: [{ format }] }, primitive: { topology: 'triangle-list' } })
  const encoder = dev.createCommandEncoder()
  const pass = encoder.beginComputePass()
  pass.setPipeline(reduce)
  pass.setBindGroup(0, dev.createBindGroup({ layout: reduce.getBindGroupLayout(0), entries: [
    { binding: 0, resource: { buffer: values, size: rows * cols * 4 } }, { binding: 1, resource: { buffer: rangeBuffer } }] }))
  pass.dispatchWorkgroups(1)
  pass.end()
  const render = encoder.beginRenderPass({ colorAttachments: [{ view: context.getCurrentTexture().createView(),
    loadOp: 'clear', storeOp: 'store', clearValue: { r: 0, g: 0, b: 0, a: 1 } }] })
  render.setPipeline(drawPipeline)
  render.setBindGroup(0, dev.createBindGroup({ layout: drawPipeline.getBindGroupLayout(0), entries: [
    { binding: 0, resource: { buffer: values } }, { binding: 1, resource: { buffer: rangeBuffer } }, { binding: 2, resource: { buffer: uniform } }] }))
  render.draw(3)
  render.end()
  dev.queue.submit([encoder.finish()])
  await dev.queue.onSubmittedWorkDone()
  uniform.destroy()
}

/** @param {any} dev @returns {Promise<number[]>} the finite minimum and maximum the compute pass found */
async function readRange(dev) {
  const U = /** @type {any} */ (globalThis).GPUBufferUsage
  const read = dev.createBuffer({ size: 8, usage: U.MAP_READ | U.COPY_DST })
  const encoder = dev.createCommandEncoder()
  encoder.copyBufferToBuffer(rangeBuffer, 0, read, 0, 8)
  dev.queue.submit([encoder.finish()])
  await read.mapAsync(/** @type {any} */ (globalThis).GPUMapMode.READ)
  const range = Array.from(new Float32Array(read.getMappedRange()))
  read.destroy()
  return range
}

/** @param {unknown} error */
function describe(error) {
  const e = /** @type {any} */ (error)
  if (e?.code === 'Aborted') return 'Cancelled.'
  return e?.code ? `${e.code}: ${e.message}` : String(e?.message ?? e)
}

$('gpu-url-form').addEventListener('submit', (/** @type {Event} */ event) => {
  event.preventDefault()
  const url = $('gpu-url').value.trim()
  if (url) openFile(new URL(url, location.href).href)
})
$('gpu-file').addEventListener('change', () => {
  const chosen = $('gpu-file').files?.[0]
  if (chosen) openFile(chosen)
})
$('gpu-sample').addEventListener('click', () => openFile(new URL(SAMPLE, location.href).href))
$('gpu-pick').addEventListener('submit', (/** @type {Event} */ event) => {
  event.preventDefault()
  const name = $('gpu-tensor').value
  if (name && file) draw(name)
})
$('gpu-cancel').addEventListener('click', () => task?.abort())
document.addEventListener('dragover', (event) => event.preventDefault())
document.addEventListener('drop', (event) => {
  event.preventDefault()
  const dropped = event.dataTransfer?.files?.[0]
  if (dropped) openFile(dropped)
})
const query = new URLSearchParams(location.search).get('url')
if (query) openFile(new URL(query, location.href).href)
