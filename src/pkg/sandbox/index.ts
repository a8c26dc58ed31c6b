/**
 * The sandbox. The property model calls `evaluateExpression` once per expression; a runner of other
 * untrusted code (search index libraries) runs it in slices on an engine of its own
 * (`withPrivateEngine`), metered by `startRunMeter`. Everything else in this folder
 * is internal: eslint refuses imports of its other files from outside it (eslint.config.js).
 */
export { evaluateExpression, type ExpressionFailureReason, type ExpressionResult } from "./expression";
export { DEFAULT_MEMORY_BYTES, DEFAULT_STACK_BYTES, DEFAULT_TIME_MS, type ExpressionLimits } from "./limits";
export { PROPERTIES_PARAMETER } from "./identifiers";
export { withPrivateEngine, type EngineLease } from "./engine";
export { MAX_STRETCH_MS, SLICE_MS, startRunMeter, type RunMeter, type RunStop } from "./limits";
