/**
 * Output type schemas, interpreted by @cfworker/json-schema's algorithm (no code generation, which
 * Workers block) with every pattern on RE2 (src/pkg/json-schema). Drafts 4, 7, 2019-09 and 2020-12
 * are supported; a schema's `$schema` picks one, 2020-12 by default. A schema is accepted when it
 * passes the structural meta-check below (the keywords' value types of those drafts), every
 * `pattern` and `patternProperties` name is one RE2 can run, and the validator can be built from it
 * (its `$ref`s resolve inside it).
 */
import type { Schema, SchemaDraft } from "@cfworker/json-schema";
import { patternProblems, UserPatternError, UserSchemaValidator } from "../pkg/json-schema";

/** Largest accepted schema (serialised JSON) and output. */
export const MAX_SCHEMA_BYTES = 64 * 1024;
export const MAX_OUTPUT_BYTES = 256 * 1024;

const DRAFTS: Record<string, SchemaDraft> = {
  "http://json-schema.org/draft-04/schema#": "4",
  "http://json-schema.org/draft-07/schema#": "7",
  "https://json-schema.org/draft/2019-09/schema": "2019-09",
  "https://json-schema.org/draft/2020-12/schema": "2020-12",
};

const schemaRef = { $ref: "#" };
const schemaArray = { type: "array", items: schemaRef };
const schemaMap = { type: "object", additionalProperties: schemaRef };
const typeName = { enum: ["array", "boolean", "integer", "null", "number", "object", "string"] };
const nonNegative = { type: "integer", minimum: 0 };

/** The keywords of the supported drafts with the shape their values must have. */
const META_SCHEMA = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: ["object", "boolean"],
  properties: {
    $schema: { type: "string", enum: Object.keys(DRAFTS) },
    $id: { type: "string" },
    $ref: { type: "string" },
    $defs: schemaMap,
    definitions: schemaMap,
    title: { type: "string" },
    description: { type: "string" },
    type: { anyOf: [typeName, { type: "array", items: typeName, minItems: 1, uniqueItems: true }] },
    enum: { type: "array" },
    properties: schemaMap,
    patternProperties: schemaMap,
    additionalProperties: schemaRef,
    unevaluatedProperties: schemaRef,
    propertyNames: schemaRef,
    required: { type: "array", items: { type: "string" }, uniqueItems: true },
    dependentRequired: { type: "object", additionalProperties: { type: "array", items: { type: "string" } } },
    dependentSchemas: schemaMap,
    items: { anyOf: [schemaRef, schemaArray] },
    prefixItems: schemaArray,
    additionalItems: schemaRef,
    unevaluatedItems: schemaRef,
    contains: schemaRef,
    allOf: { ...schemaArray, minItems: 1 },
    anyOf: { ...schemaArray, minItems: 1 },
    oneOf: { ...schemaArray, minItems: 1 },
    not: schemaRef,
    if: schemaRef,
    then: schemaRef,
    else: schemaRef,
    multipleOf: { type: "number", exclusiveMinimum: 0 },
    maximum: { type: "number" },
    minimum: { type: "number" },
    exclusiveMaximum: { type: ["number", "boolean"] },
    exclusiveMinimum: { type: ["number", "boolean"] },
    maxLength: nonNegative,
    minLength: nonNegative,
    // Whether RE2 can run it is checked by patternProblems, which names the construct it lacks.
    pattern: { type: "string" },
    maxItems: nonNegative,
    minItems: nonNegative,
    uniqueItems: { type: "boolean" },
    maxContains: nonNegative,
    minContains: nonNegative,
    maxProperties: nonNegative,
    minProperties: nonNegative,
    format: { type: "string" },
  },
};

const metaValidator = new UserSchemaValidator(META_SCHEMA as Schema, "2020-12", false);

function draftOf(schema: unknown): SchemaDraft {
  const declared = typeof schema === "object" && schema !== null ? (schema as { $schema?: unknown }).$schema : undefined;
  return (typeof declared === "string" && DRAFTS[declared]) || "2020-12";
}

/** One reason a schema is refused: `pointer` is where in the schema ("" for the whole), `rule` the field problem's rule. */
export interface SchemaProblem {
  pointer: string;
  rule: string;
  message: string;
}

/** Why `schema` is not a usable JSON Schema (each reason names where), or an empty list. */
export function schemaProblems(schema: unknown): SchemaProblem[] {
  const whole = (message: string): SchemaProblem => ({ pointer: "", rule: "jsonSchema", message });
  if (JSON.stringify(schema).length > MAX_SCHEMA_BYTES) return [whole(`the schema is larger than ${MAX_SCHEMA_BYTES} bytes`)];
  const result = metaValidator.validate(schema);
  if (!result.valid) {
    // The meta-check reports each failure once per enclosing keyword; keep the innermost.
    const seen = new Set<string>();
    return result.errors
      .filter(
        (e) =>
          e.keyword !== "$ref" &&
          e.keyword !== "properties" &&
          e.keyword !== "additionalProperties" &&
          e.keyword !== "items" &&
          e.keyword !== "anyOf",
      )
      .map((e) => `${e.instanceLocation === "#" ? "the schema" : e.instanceLocation.slice(1)}: ${e.error}`)
      .filter((m) => !seen.has(m) && seen.add(m))
      .slice(0, 20)
      .map(whole);
  }
  const patterns = patternProblems(schema);
  if (patterns.length > 0)
    return patterns.slice(0, 20).map(({ pointer, rule, message }) => ({ pointer, rule, message: `${pointer}: ${message}` }));
  try {
    new UserSchemaValidator(schema as Schema, draftOf(schema)).validate(null);
  } catch (error) {
    return [whole(`the schema cannot be used: ${error instanceof Error ? error.message : String(error)}`)];
  }
  return [];
}

/** Schema errors of `value` (instance location and message), empty when it is valid or `schema` is null. */
export function validateOutput(schema: unknown, value: unknown): string[] {
  if (schema === null || schema === undefined) return [];
  let result;
  try {
    result = new UserSchemaValidator(schema as Schema, draftOf(schema), false).validate(value);
  } catch (error) {
    // Only a schema saved before its patterns were checked can get here: refuse rather than guess.
    if (error instanceof UserPatternError)
      return [`the output type's schema has a pattern that cannot run (${error.message}); correct the output type`];
    throw error;
  }
  if (result.valid) return [];
  const seen = new Set<string>();
  // Keywords that only say "something inside failed": dropped when the inner failure is listed too.
  const enclosing = new Set(["properties", "patternProperties", "additionalProperties", "items", "prefixItems", "allOf", "$ref"]);
  const inner = result.errors.filter((e) => !enclosing.has(e.keyword));
  return (inner.length > 0 ? inner : result.errors)
    .map((e) => `${e.instanceLocation === "#" ? "output" : `output${e.instanceLocation.slice(1)}`}: ${e.error}`)
    .filter((m) => !seen.has(m) && seen.add(m))
    .slice(0, 50);
}
