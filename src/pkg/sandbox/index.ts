/**
 * The valueExpression sandbox. The property model calls `evaluateExpression` once per expression;
 * everything else in this folder is internal.
 */
export { evaluateExpression, type ExpressionFailureReason, type ExpressionResult } from "./expression";
export { DEFAULT_MEMORY_BYTES, DEFAULT_STACK_BYTES, DEFAULT_TIME_MS, type ExpressionLimits } from "./limits";
export { PROPERTIES_PARAMETER } from "./identifiers";
