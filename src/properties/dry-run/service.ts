/**
 * Dry runs: what a write of linked values would resolve to, or what one expression returns, without
 * changing anything. Problems of the values are the answer (valid = false), not a 400, so an editor
 * sees the whole picture; a malformed request is still a 400.
 */
import type { Database } from "../../db/statements";
import type { FieldProblem } from "../../pkg/errors";
import { expressionShapeProblem, runExpression } from "../values/expressions";
import { checkValue, isEmptyValue, type JsonValue } from "../values/format";
import { checkLinkedValues, toLinkedProperties } from "../values/resolve";
import type { Format } from "../definitions/rules";
import type { DryRunRequest, DryRunResult } from "./schema";

export async function dryRun(db: Database, request: DryRunRequest): Promise<DryRunResult> {
  if (request.expression !== undefined) return dryRunExpression(request.expression, request.properties, request.format);
  const checked = await checkLinkedValues(db, {
    entityTypeId: request.entityTypeId as string,
    ...(request.applicationRule !== undefined ? { applicationRule: request.applicationRule } : {}),
    values: request.properties,
  });
  return checked.ok
    ? { valid: true, properties: toLinkedProperties(checked.properties) }
    : { valid: false, code: checked.code, errors: checked.errors };
}

async function dryRunExpression(
  expression: string,
  properties: DryRunRequest["properties"],
  format: Format | undefined,
): Promise<DryRunResult> {
  const errors: FieldProblem[] = [];
  const scope: Record<string, JsonValue> = {};
  properties.forEach(({ name, value }, index) => {
    if (Object.hasOwn(scope, name))
      errors.push({ field: `body.properties.${index}.name`, rule: "duplicate", message: `'${name}' is given more than once.` });
    else scope[name] = (value ?? null) as JsonValue;
  });
  const shape = expressionShapeProblem(expression);
  if (shape) errors.push({ field: "body.expression", rule: shape.rule, message: shape.message });
  if (errors.length > 0) return { valid: false, code: "ValidationFailed", errors };

  const failed = (rule: string, message: string): DryRunResult => ({
    valid: false,
    code: "ExpressionFailed",
    errors: [{ field: "body.expression", rule, message }],
  });
  const run = await runExpression(expression, scope);
  if (!run.ok) return failed("expression", `The expression failed: ${run.message}`);
  if (run.value === undefined) return failed("expression", "The expression returned no value (no return statement was reached).");
  if (format === undefined || isEmptyValue(run.value)) return { valid: true, value: isEmptyValue(run.value) ? null : run.value };
  // Without a definition there is no regex nor classification to check: only the JSON type of the result.
  const checked =
    format === "classification"
      ? typeof run.value === "string"
        ? ({ ok: true, value: run.value } as const)
        : ({ ok: false, rule: "type", message: "Expected the name of a classification element." } as const)
      : checkValue({ format, regex: null, regexErrorMessage: null, isMultiselect: Array.isArray(run.value) }, run.value);
  return checked.ok
    ? { valid: true, value: checked.value }
    : failed(checked.rule, `The expression returned a value that is not a valid ${format}: ${checked.message}`);
}
