/**
 * The sandbox. The property model calls `evaluateExpression` once per expression; a runner of other
 * untrusted code (search index libraries) runs it in slices on an engine of its own
 * (`withPrivateEngine`), metered by `startRunMeter`. Everything else in this folder
 * is internal: eslint refuses imports of its other files from outside it (eslint.config.js).
 */
export { evaluateExpression } from "./expression";

export { withPrivateEngine } from "./engine";
export { MAX_STRETCH_MS, SLICE_MS, startRunMeter, type RunStop } from "./limits";
