/**
 * Value expressions run in the QuickJS sandbox (never eval/new Function: both throw on Workers). An
 * expression is the body of a function; the entity's other properties are in scope by name.
 */
import { evaluateExpression } from "../../pkg/sandbox";
import { LIMITS } from "../definitions/rules";
import type { JsonValue } from "./format";

export type ExpressionRun = { ok: true; value: JsonValue | undefined } | { ok: false; message: string };

/** A `return` keyword somewhere in the body; the spec requires one, so its absence is refused before running. */
const RETURN = /\breturn\b/;

/** Problems visible without running the expression: size and the missing return. */
export function expressionShapeProblem(body: string): { rule: "maxLength" | "missingReturn"; message: string } | undefined {
  if (new TextEncoder().encode(body).length > LIMITS.valueExpressionBytes) {
    return { rule: "maxLength", message: `A valueExpression is limited to ${LIMITS.valueExpressionBytes} bytes.` };
  }
  if (!RETURN.test(body))
    return { rule: "missingReturn", message: "A valueExpression is the body of a function and must contain a return statement." };
  return undefined;
}

/** Runs an expression with the given variables in scope. */
export async function runExpression(body: string, scope: Record<string, JsonValue>): Promise<ExpressionRun> {
  const shape = expressionShapeProblem(body);
  if (shape) return { ok: false, message: shape.message };
  const result = await evaluateExpression(body, scope);
  if (!result.ok) return { ok: false, message: result.message };
  return { ok: true, value: result.value as JsonValue | undefined };
}

/**
 * The syntax error of an expression, if any. Saving a definition checks only syntax: with an empty
 * scope the other properties are missing, so runtime errors at save time would be false alarms.
 */
export async function expressionSyntaxError(body: string): Promise<string | undefined> {
  const result = await evaluateExpression(body, {});
  return !result.ok && result.reason === "syntax" ? result.message : undefined;
}
