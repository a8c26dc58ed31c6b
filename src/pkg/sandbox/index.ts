/**
 * The sandbox. The property model calls `evaluateExpression` once per expression; a runner of other
 * untrusted code (search index libraries) leases an engine with `acquireEngine`, bounds its time with
 * `startInterruptMeter` and gives the engine back with `discardEngine`. Everything else in this folder
 * is internal: eslint refuses imports of its other files from outside it (eslint.config.js).
 */
export { evaluateExpression, type ExpressionFailureReason, type ExpressionResult } from "./expression";
export { DEFAULT_MEMORY_BYTES, DEFAULT_STACK_BYTES, DEFAULT_TIME_MS, type ExpressionLimits } from "./limits";
export { PROPERTIES_PARAMETER } from "./identifiers";
export { acquireEngine, discardEngine, type EngineLease } from "./engine";
export { startInterruptMeter, type InterruptMeter } from "./limits";
