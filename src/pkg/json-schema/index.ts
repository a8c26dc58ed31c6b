/**
 * JSON Schemas written by users, evaluated by @cfworker/json-schema's algorithm (./validate.ts) with
 * every `pattern` and `patternProperties` on RE2 (src/pkg/regex.ts), never on the native regex
 * engine. Use this, not the library's Validator, for any schema a user supplies.
 */
import {
  dereference,
  ignoredKeyword,
  schemaArrayKeyword,
  schemaMapKeyword,
  type Schema,
  type SchemaDraft,
  type ValidationResult,
} from "@cfworker/json-schema";
import { checkPattern, type PatternRule } from "../regex";
import { validate } from "./validate";

export { UserPatternError } from "../regex";

/** A pattern of a schema that RE2 cannot run: where (a JSON Pointer into the schema) and why. */
export interface PatternProblem {
  pointer: string;
  rule: PatternRule;
  message: string;
}

/** A JSON Pointer (RFC 6901) reference token; the library's encodePointer also percent-encodes for URIs. */
const token = (name: string) => name.replaceAll("~", "~0").replaceAll("/", "~1");

export class UserSchemaValidator {
  private readonly lookup: ReturnType<typeof dereference>;

  /** Throws when the schema's references cannot be indexed (e.g. two subschemas with one $id). */
  constructor(
    private readonly schema: Schema | boolean,
    private readonly draft: SchemaDraft,
    private readonly shortCircuit = true,
  ) {
    this.lookup = dereference(schema);
  }

  /** Throws a UserPatternError when it meets a pattern RE2 cannot run (see {@link patternProblems}). */
  validate(instance: unknown): ValidationResult {
    return validate(instance, this.schema as Schema, this.draft, this.lookup, this.shortCircuit);
  }
}

/**
 * Every `pattern` and `patternProperties` name in the schema that RE2 cannot run, visiting the
 * subschemas the evaluator can reach (the same walk as the library's dereference, which indexes them
 * for `$ref`). Check this when a schema is saved, so a bad pattern is a 400 then, not at validation.
 */
export function patternProblems(schema: unknown): PatternProblem[] {
  const problems: PatternProblem[] = [];
  const check = (source: string, pointer: string) => {
    const checked = checkPattern(source, "unicode");
    if (!checked.ok) problems.push({ pointer, rule: checked.rule, message: checked.message });
  };
  const walk = (node: unknown, pointer: string) => {
    if (typeof node !== "object" || node === null || Array.isArray(node)) return;
    const record = node as Record<string, unknown>;
    if (typeof record.pattern === "string") check(record.pattern, `${pointer}/pattern`);
    const patternProperties = record.patternProperties;
    if (typeof patternProperties === "object" && patternProperties !== null && !Array.isArray(patternProperties)) {
      for (const name of Object.keys(patternProperties)) check(name, `${pointer}/patternProperties/${token(name)}`);
    }
    for (const [key, value] of Object.entries(record)) {
      if (ignoredKeyword[key]) continue;
      const at = `${pointer}/${token(key)}`;
      if (Array.isArray(value)) {
        if (schemaArrayKeyword[key]) value.forEach((item, i) => walk(item, `${at}/${i}`));
      } else if (schemaMapKeyword[key] && typeof value === "object" && value !== null) {
        for (const [name, sub] of Object.entries(value)) walk(sub, `${at}/${token(name)}`);
      } else {
        walk(value, at);
      }
    }
  };
  walk(schema, "");
  return problems;
}
