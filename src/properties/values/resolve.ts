/**
 * Linked property values (spec 2.1): validates `{name, value}` lists against the definitions linked to
 * an entity type, applies defaults and required, types each value by its format and computes value
 * expressions. Every problem is reported, not only the first.
 *
 * Order of work:
 * 1. Names: each must be linked to the type (and fit the application rule, when one is given) and
 *    appear once.
 * 2. Given values of properties without an expression: typed by format; an empty value (null, an
 *    empty multiselect) takes the default, else is null; required and empty is an error. Linked
 *    properties not given are treated as given null. Problems so far end here (ValidationFailed),
 *    because expressions would run on invalid inputs.
 * 3. Expressions, in link order: each sees every other linked property by name, with the values
 *    resolved so far (an expression property later in the order is still null; there is no
 *    recursion). The result is checked against the format and becomes the value, whatever value was
 *    given: a computed property cannot be overwritten, so a client may send back what it read.
 *    A null result takes the default; undefined (no return reached), a throw, a timeout or a result
 *    of the wrong type is an ExpressionFailed problem.
 */
import type { Database } from "../../db/statements";
import { ApiError, type FieldProblem } from "../../pkg/errors";
import { normaliseApplicationRule } from "../definitions/rules";
import { runExpression } from "./expressions";
import { checkValue, isEmptyValue, type JsonValue } from "./format";
import { loadLinkedDefinitions } from "./store";
import type { LinkedDefinition, ResolvedProperty } from "./types";

export interface LinkedValueInput {
  name: string;
  value?: unknown;
}

export interface ResolveOptions {
  entityTypeId: string;
  /** When given, only linked definitions with this application rule may be used (deviatioType is read as deviationType). */
  applicationRule?: string;
  values: readonly LinkedValueInput[];
  /** Where the values are in the request, for errors[].field. Default `body.properties`. */
  field?: string;
  /** Where the entity type id is in the request. Default `body.entityTypeId`. */
  entityTypeField?: string;
}

export type LinkedValuesCheck =
  { ok: true; properties: ResolvedProperty[] } | { ok: false; code: "ValidationFailed" | "ExpressionFailed"; errors: FieldProblem[] };

/**
 * Resolves linked values or throws a 400 listing every problem: ValidationFailed for values,
 * ExpressionFailed when value expressions failed. An unknown entity type is a ValidationFailed on
 * the entity type field (rule `exists`).
 */
export async function resolveLinkedValues(db: Database, options: ResolveOptions): Promise<ResolvedProperty[]> {
  const checked = await checkLinkedValues(db, options);
  if (checked.ok) return checked.properties;
  const summary = checked.errors.map((e) => `${e.field}: ${e.message}`).join("; ");
  throw new ApiError(checked.code, summary, { errors: checked.errors });
}

/** As {@link resolveLinkedValues}, but returns the problems instead of throwing them (dry runs). */
export async function checkLinkedValues(db: Database, options: ResolveOptions): Promise<LinkedValuesCheck> {
  const definitions = await loadLinkedDefinitions(db, options.entityTypeId);
  if (!definitions) {
    const field = options.entityTypeField ?? "body.entityTypeId";
    throw new ApiError("ValidationFailed", `Entity type ${options.entityTypeId} does not exist.`, {
      errors: [{ field, rule: "exists", message: `Entity type ${options.entityTypeId} does not exist.` }],
    });
  }
  return resolveAgainst(definitions, options.values, {
    field: options.field ?? "body.properties",
    applicationRule:
      options.applicationRule === undefined ? undefined : (normaliseApplicationRule(options.applicationRule) ?? options.applicationRule),
  });
}

interface Given {
  index: number;
  value: unknown;
}

/** The resolution itself, on definitions already loaded (link order). */
export async function resolveAgainst(
  definitions: readonly LinkedDefinition[],
  values: readonly LinkedValueInput[],
  options: { field: string; applicationRule?: string | undefined },
): Promise<LinkedValuesCheck> {
  const { field } = options;
  const errors: FieldProblem[] = [];
  const byName = new Map(definitions.map((d) => [d.name, d]));
  const given = new Map<string, Given>();

  values.forEach((input, index) => {
    const definition = byName.get(input.name);
    const at = `${field}.${index}.name`;
    if (!definition) {
      errors.push({ field: at, rule: "unknownProperty", message: `'${input.name}' is not a property linked to the entity type.` });
    } else if (options.applicationRule !== undefined && definition.applicationRule !== options.applicationRule) {
      errors.push({
        field: at,
        rule: "unknownProperty",
        message:
          `'${input.name}' has the application rule ${definition.applicationRule}; only ${options.applicationRule} ` +
          `properties can be used here.`,
      });
    } else if (given.has(input.name)) {
      errors.push({ field: at, rule: "duplicate", message: `'${input.name}' is given more than once.` });
    } else {
      given.set(input.name, { index, value: input.value });
    }
  });

  const applicable = definitions.filter((d) => options.applicationRule === undefined || d.applicationRule === options.applicationRule);
  const resolved = new Map<string, JsonValue>();
  for (const definition of applicable) {
    if (definition.valueExpression !== null) {
      resolved.set(definition.name, null);
      continue;
    }
    const input = given.get(definition.name);
    const at = input ? `${field}.${input.index}.value` : `${field}.${definition.name}`;
    if (input && !isEmptyValue(input.value)) {
      const checked = checkValue(definition, input.value);
      if (checked.ok) resolved.set(definition.name, checked.value);
      else errors.push({ field: at, rule: checked.rule, message: checked.message });
      continue;
    }
    const fallback = emptyValue(definition, at);
    if ("problem" in fallback) errors.push(fallback.problem);
    else resolved.set(definition.name, fallback.value);
  }
  if (errors.length > 0) return { ok: false, code: "ValidationFailed", errors };

  for (const definition of applicable) {
    if (definition.valueExpression === null) continue;
    const at = `${field}.${definition.name}`;
    const problem = (rule: string, message: string) => errors.push({ field: at, rule, message: `'${definition.name}': ${message}` });
    const scope = Object.fromEntries([...resolved].filter(([name]) => name !== definition.name));
    const run = await runExpression(definition.valueExpression, scope);
    if (!run.ok) {
      problem("expression", `the valueExpression failed: ${run.message}`);
    } else if (run.value === undefined) {
      problem("expression", "the valueExpression returned no value (no return statement was reached).");
    } else if (isEmptyValue(run.value)) {
      const fallback = emptyValue(definition, at);
      if ("problem" in fallback) problem(fallback.problem.rule, `the valueExpression returned no value, and ${fallback.problem.message}`);
      else resolved.set(definition.name, fallback.value);
    } else {
      const checked = checkValue(definition, run.value);
      if (checked.ok) resolved.set(definition.name, checked.value);
      else problem("expression", `the valueExpression returned a value that is not valid: ${checked.message}`);
    }
  }
  if (errors.length > 0) return { ok: false, code: "ExpressionFailed", errors };

  return {
    ok: true,
    properties: applicable.map((d) => ({
      name: d.name,
      value: resolved.get(d.name) ?? null,
      definitionId: d.id,
      format: d.format,
      isMultiselect: d.isMultiselect,
    })),
  };
}

/** An empty value takes the default; without one it is null, which a required property refuses. */
function emptyValue(definition: LinkedDefinition, at: string): { value: JsonValue } | { problem: FieldProblem } {
  if (!isEmptyValue(definition.defaultValue)) return { value: definition.defaultValue };
  if (definition.required)
    return { problem: { field: at, rule: "required", message: `'${definition.name}' is required and cannot be null.` } };
  return { value: null };
}

/** The `{name, value}` list of resolved properties, as the API returns them. */
export function toLinkedProperties(properties: readonly ResolvedProperty[]): { name: string; value: JsonValue }[] {
  return properties.map(({ name, value }) => ({ name, value }));
}
