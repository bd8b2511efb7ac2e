/**
 * Canvas drawing: the histogram of a tensor's values and the heatmap of a 2-D plane, with its
 * colour scale. Canvases are drawn at the device's pixel ratio so they stay sharp.
 */

/** @typedef {{ values: Float32Array, rows: number, cols: number }} Plane  row-major */
/**
 * @typedef {{ kind: 'diverging' | 'sequential' | 'constant', lo: number, hi: number,
 *   clipped: boolean, nan: boolean }} Scale
 */

// Colour stops (position 0..1, RGB). Diverging: negative blue, zero near white, positive red.
const DIVERGING = [[0, [31, 63, 143]], [0.25, [91, 143, 214]], [0.5, [244, 244, 242]], [0.75, [224, 122, 95]], [1, [155, 29, 32]]]
// Sequential: dark navy through teal and green to yellow, light increasing steadily.
const SEQUENTIAL = [[0, [16, 24, 72]], [0.25, [44, 79, 158]], [0.5, [35, 136, 142]], [0.75, [83, 184, 106]], [1, [232, 228, 80]]]

/** @param {number[][] | any[]} stops @returns {Uint8ClampedArray} 256 RGB entries */
function lut(stops) {
  const out = new Uint8ClampedArray(256 * 3)
  for (let i = 0; i < 256; i++) {
    const t = i / 255
    let k = 0
    while (k < stops.length - 2 && t > stops[k + 1][0]) k++
    const [t0, c0] = stops[k]
    const [t1, c1] = stops[k + 1]
    const f = (t - t0) / (t1 - t0)
    for (let c = 0; c < 3; c++) out[i * 3 + c] = c0[c] + f * (c1[c] - c0[c])
  }
  return out
}
const LUTS = { diverging: lut(DIVERGING), sequential: lut(SEQUENTIAL), constant: lut(SEQUENTIAL) }

/**
 * Sizes a canvas's backing store to its displayed size at the device pixel ratio.
 * @param {HTMLCanvasElement} canvas @param {number} cssWidth @param {number} cssHeight
 */
function fit(canvas, cssWidth, cssHeight) {
  const ratio = window.devicePixelRatio || 1
  canvas.style.height = `${cssHeight}px`
  canvas.width = Math.max(1, Math.round(cssWidth * ratio))
  canvas.height = Math.max(1, Math.round(cssHeight * ratio))
  const ctx = /** @type {CanvasRenderingContext2D} */ (canvas.getContext('2d'))
  return { ctx, ratio, width: canvas.width, height: canvas.height }
}

/** @param {Element} element @param {string} name @param {string} fallback */
function cssColour(element, name, fallback) {
  return getComputedStyle(element).getPropertyValue(name).trim() || fallback
}

/**
 * Draws the histogram's bars (a bar per bin, at least a pixel high when its count is not 0).
 * @param {HTMLCanvasElement} canvas
 * @param {{ min: number, max: number, counts: number[] }} histogram
 * @param {{ log?: boolean, highlight?: number }} [options]
 */
export function drawHistogram(canvas, histogram, options = {}) {
  const { ctx, ratio, width, height } = fit(canvas, canvas.clientWidth || 600, 160)
  const { counts } = histogram
  ctx.clearRect(0, 0, width, height)
  const grid = cssColour(canvas, '--grid', '#e6e8ec')
  ctx.strokeStyle = grid
  ctx.lineWidth = ratio
  for (const f of [0.25, 0.5, 0.75, 1]) {
    const y = Math.round(height - f * (height - 2 * ratio)) + 0.5
    ctx.beginPath()
    ctx.moveTo(0, y)
    ctx.lineTo(width, y)
    ctx.stroke()
  }
  const scale = (/** @type {number} */ c) => (options.log ? Math.log10(1 + c) : c)
  const top = Math.max(...counts.map(scale), 1)
  const n = counts.length
  const barWidth = width / n
  const gap = barWidth > 4 * ratio ? ratio : 0
  const accent = cssColour(canvas, '--accent', '#3b5bdb')
  const strong = cssColour(canvas, '--accent-strong', '#1f3fae')
  counts.forEach((c, i) => {
    if (c === 0) return
    const h = Math.max(ratio, (scale(c) / top) * (height - 2 * ratio))
    ctx.fillStyle = i === options.highlight ? strong : accent
    ctx.fillRect(i * barWidth + gap / 2, height - h, Math.max(ratio, barWidth - gap), h)
  })
  // Where zero falls, when it is inside the range.
  if (histogram.min < 0 && histogram.max > 0) {
    const x = Math.round(((0 - histogram.min) / (histogram.max - histogram.min)) * width) + 0.5
    ctx.strokeStyle = cssColour(canvas, '--muted', '#6b7280')
    ctx.setLineDash([3 * ratio, 3 * ratio])
    ctx.beginPath()
    ctx.moveTo(x, 0)
    ctx.lineTo(x, height)
    ctx.stroke()
    ctx.setLineDash([])
  }
}

/**
 * The colour scale of a plane: its 0.5th-99.5th percentiles (so that a few outliers do not wash
 * out the rest), symmetric around zero when the values have both signs.
 * @param {Float32Array} values
 * @returns {Scale}
 */
export function colourScale(values) {
  const step = Math.max(1, Math.floor(values.length / 65536))
  /** @type {number[]} */
  const sample = []
  let nan = false
  let min = Infinity
  let max = -Infinity
  for (let i = 0; i < values.length; i++) {
    const v = values[i]
    if (Number.isNaN(v)) {
      nan = true
      continue
    }
    if (v < min) min = v
    if (v > max) max = v
    if (i % step === 0 && Number.isFinite(v)) sample.push(v)
  }
  if (sample.length === 0 || min === max) return { kind: 'constant', lo: min, hi: max, clipped: false, nan }
  sample.sort((a, b) => a - b)
  const q = (/** @type {number} */ p) => sample[Math.min(sample.length - 1, Math.floor(p * (sample.length - 1)))]
  let lo = q(0.005)
  let hi = q(0.995)
  if (lo === hi) {
    lo = sample[0]
    hi = sample[sample.length - 1]
  }
  if (lo < 0 && hi > 0) {
    const magnitudes = sample.map(Math.abs).sort((a, b) => a - b)
    const limit = magnitudes[Math.floor(0.995 * (magnitudes.length - 1))] || magnitudes[magnitudes.length - 1]
    return { kind: 'diverging', lo: -limit, hi: limit, clipped: min < -limit || max > limit, nan }
  }
  return { kind: 'sequential', lo, hi, clipped: min < lo || max > hi, nan }
}

/**
 * Draws a plane as a heatmap. Larger planes than the canvas are averaged into its pixels;
 * smaller ones are drawn as blocks. Returns how many values each pixel averages.
 * @param {HTMLCanvasElement} canvas
 * @param {Plane} plane
 * @param {Scale} scale
 * @returns {{ cellRows: number, cellCols: number }}
 */
export function drawHeatmap(canvas, plane, scale) {
  const cssWidth = canvas.clientWidth || 600
  const cssHeight = Math.round(Math.min(440, Math.max(48, (cssWidth * plane.rows) / plane.cols)))
  const { ctx, width, height } = fit(canvas, cssWidth, cssHeight)
  const gw = Math.min(plane.cols, width)
  const gh = Math.min(plane.rows, height)
  const sums = new Float64Array(gw * gh)
  const counts = new Uint32Array(gw * gh)
  const colOf = new Uint32Array(plane.cols)
  for (let c = 0; c < plane.cols; c++) colOf[c] = Math.floor((c * gw) / plane.cols)
  for (let r = 0; r < plane.rows; r++) {
    const base = Math.floor((r * gh) / plane.rows) * gw
    const offset = r * plane.cols
    for (let c = 0; c < plane.cols; c++) {
      const v = plane.values[offset + c]
      if (Number.isNaN(v)) continue
      sums[base + colOf[c]] += v
      counts[base + colOf[c]]++
    }
  }
  const table = LUTS[scale.kind]
  const image = new ImageData(gw, gh)
  const span = scale.hi - scale.lo
  const data = image.data  // starts black: the colour of pixels with only NaN values
  for (let i = 0; i < gw * gh; i++) {
    if (counts[i] > 0) {
      const t = scale.kind === 'constant' || span === 0 ? 0.5 : (sums[i] / counts[i] - scale.lo) / span
      const k = Math.round(Math.max(0, Math.min(1, t)) * 255) * 3
      data[i * 4] = table[k]
      data[i * 4 + 1] = table[k + 1]
      data[i * 4 + 2] = table[k + 2]
    }
    data[i * 4 + 3] = 255
  }
  const off = document.createElement('canvas')
  off.width = gw
  off.height = gh
  const offCtx = /** @type {CanvasRenderingContext2D} */ (off.getContext('2d'))
  offCtx.putImageData(image, 0, 0)
  ctx.imageSmoothingEnabled = false
  ctx.drawImage(off, 0, 0, width, height)
  return { cellRows: plane.rows / gh, cellCols: plane.cols / gw }
}

/**
 * Draws the colour scale as a horizontal gradient.
 * @param {HTMLCanvasElement} canvas @param {Scale} scale
 */
export function drawLegend(canvas, scale) {
  const { ctx, width, height } = fit(canvas, canvas.clientWidth || 240, 12)
  const table = LUTS[scale.kind]
  for (let x = 0; x < width; x++) {
    const k = scale.kind === 'constant' ? 128 * 3 : Math.round((x / Math.max(1, width - 1)) * 255) * 3
    ctx.fillStyle = `rgb(${table[k]}, ${table[k + 1]}, ${table[k + 2]})`
    ctx.fillRect(x, 0, 1, height)
  }
}
