/**
 * Symbol.dispose / Symbol.asyncDispose where the platform has them (Chromium, Node 22+);
 * registered symbols elsewhere (Node 20), so dispose methods exist under a stable key.
 */
export const DISPOSE = /** @type {typeof Symbol.dispose} */ (Symbol.dispose ?? Symbol.for('Symbol.dispose'))
export const ASYNC_DISPOSE = /** @type {typeof Symbol.asyncDispose} */ (Symbol.asyncDispose ?? Symbol.for('Symbol.asyncDispose'))
