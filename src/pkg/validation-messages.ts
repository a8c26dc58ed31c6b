/**
 * Validation failures as sentences about the API (issue 24, "Answers that help"). zod's own wording
 * ("Invalid input: expected array, received undefined", "Invalid UUID") talks about the validator; a
 * client wants to read which field is wrong, what it must be, and an example:
 *
 *   allowedExtensions is required: a list of text values such as ["xlsx","xls","csv"].
 *   id must be a UUID such as 3f2b9c1e-5d7a-4e21-9b0c-6a8d4e2f1a03, not 'abc'.
 *
 * Done once, where zod issues become problem details (the validation hook in src/app-factory.ts):
 * each issue keeps its `field` (`body.allowedExtensions`) and `rule` (zod's issue code, or a custom
 * rule), only its `message` changes. A message a schema wrote itself (`.regex(..., { message })`,
 * a refinement) is kept as written: it already speaks about the API. What a field must be is read
 * from the route's own schema (the type, the format, the bounds, and the OpenAPI `example`), which
 * `defineRoute` hands over per request (see {@link rememberRequestSchemas}).
 */
import { getOpenApiMetadata } from "@asteasolutions/zod-to-openapi";
import type { Context } from "hono";
import { z } from "zod";
import type { AppEnv, RouteStep } from "../env";
import type { FieldProblem } from "./errors";

/** What a zod issue holds that the sentences use (zod 4's issue shapes, read loosely). */
interface Issue {
  code: string;
  path: PropertyKey[];
  message: string;
  expected?: string;
  format?: string;
  origin?: string;
  minimum?: number | bigint;
  maximum?: number | bigint;
  inclusive?: boolean;
  exact?: boolean;
  values?: unknown[];
  keys?: string[];
  divisor?: number;
  params?: { rule?: string };
  /** invalid_union: the issues of each option. */
  errors?: Issue[][];
}

/** zod 4's internals, as far as a schema is walked and described here. */
interface Schema {
  _zod: { def: Def; bag?: Record<string, unknown> };
}
interface Def {
  type: string;
  format?: string;
  shape?: Record<string, Schema>;
  element?: Schema;
  innerType?: Schema;
  in?: Schema;
  out?: Schema;
  options?: Schema[];
  valueType?: Schema;
  items?: Schema[];
  left?: Schema;
  right?: Schema;
  getter?: () => Schema;
  entries?: Record<string, unknown>;
  values?: unknown[];
  checks?: { _zod: { def: { check?: string; format?: string } } }[];
}

export type Target = "json" | "form" | "query" | "param" | "header" | string;

/**
 * Middleware `defineRoute` puts before the validators: it tells the validation hook which schemas
 * this request is checked against, so a message can say what a field must be and show its example.
 */
export function rememberRequestSchemas(
  request: { query?: unknown; params?: unknown; headers?: unknown; body?: { content?: object } } | undefined,
): RouteStep {
  const content = (request?.body?.content ?? {}) as Record<string, { schema?: unknown } | undefined>;
  const schemas: Partial<Record<Target, unknown>> = {
    query: request?.query,
    param: request?.params,
    header: request?.headers,
    json: content["application/json"]?.schema,
    form: content["multipart/form-data"]?.schema ?? content["application/x-www-form-urlencoded"]?.schema,
  };
  // A context variable rather than a WeakMap keyed by the context: a WeakMap entry per request is
  // an ephemeron the garbage collector has to trace (about 2 % of a read's CPU).
  return (c) => c.set("requestSchemas", schemas);
}

const isSchema = (value: unknown): value is Schema => typeof value === "object" && value !== null && "_zod" in value;

/** Wrappers that do not change what a value must look like. */
const WRAPPERS = new Set(["optional", "nullable", "default", "prefault", "readonly", "nonoptional", "catch", "success"]);

function unwrap(schema: Schema, seen = 0): { schema: Schema; nullable: boolean } {
  let current = schema;
  let nullable = false;
  for (let i = seen; i < 20; i++) {
    const def = current._zod.def;
    if (def.type === "nullable") nullable = true;
    if (WRAPPERS.has(def.type) && def.innerType) current = def.innerType;
    else if (def.type === "pipe" && def.in && def.out) current = def.in._zod.def.type === "transform" ? def.out : def.in;
    else if (def.type === "lazy" && def.getter) current = def.getter();
    else break;
  }
  return { schema: current, nullable };
}

/** The sub-schema at `path`, or null when the path leaves what the schema describes. */
function schemaAt(root: unknown, path: readonly PropertyKey[]): Schema | null {
  if (!isSchema(root)) return null;
  let current: Schema = root;
  for (const key of path) {
    const { schema } = unwrap(current);
    const next = childOf(schema, key);
    if (!next) return null;
    current = next;
  }
  return current;
}

function childOf(schema: Schema, key: PropertyKey): Schema | null {
  const def = schema._zod.def;
  switch (def.type) {
    case "object":
      return def.shape?.[String(key)] ?? null;
    case "array":
      return def.element ?? null;
    case "record":
      return def.valueType ?? null;
    case "tuple":
      return def.items?.[Number(key)] ?? null;
    case "union":
      for (const option of def.options ?? []) {
        const found = childOf(unwrap(option).schema, key);
        if (found) return found;
      }
      return null;
    case "intersection":
      return (def.left && childOf(unwrap(def.left).schema, key)) || (def.right && childOf(unwrap(def.right).schema, key)) || null;
    default:
      return null;
  }
}

function valueAt(data: unknown, path: readonly PropertyKey[]): unknown {
  let current = data;
  for (const key of path) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

/** `inputTemplates[0].name`: how the API's documentation names a field. */
export function fieldName(path: readonly PropertyKey[]): string {
  let name = "";
  for (const key of path) {
    if (typeof key === "number" || /^\d+$/.test(String(key))) name += `[${String(key)}]`;
    else name += name === "" ? String(key) : `.${String(key)}`;
  }
  return name;
}

const WHOLE: Record<string, string> = { json: "The body", form: "The form", query: "The query", param: "The path", header: "The headers" };

/** Examples of formats whose schema shows none. */
const FORMAT_EXAMPLES: Record<string, string> = {
  uuid: "3f2b9c1e-5d7a-4e21-9b0c-6a8d4e2f1a03",
  guid: "3f2b9c1e-5d7a-4e21-9b0c-6a8d4e2f1a03",
  datetime: "2026-01-05T09:00:00Z",
  date: "2026-01-05",
  time: "09:00:00",
  email: "ada@example.com",
  url: "https://example.com/",
};

const FORMAT_NOUNS: Record<string, [string, string]> = {
  uuid: ["a UUID", "UUIDs"],
  guid: ["a UUID", "UUIDs"],
  datetime: ["an ISO 8601 date-time in UTC", "ISO 8601 date-times"],
  date: ["an ISO 8601 date", "ISO 8601 dates"],
  time: ["an ISO 8601 time of day", "times of day"],
  duration: ["an ISO 8601 duration", "ISO 8601 durations"],
  email: ["an email address", "email addresses"],
  url: ["a URL", "URLs"],
  base64: ["base64 text", "base64 texts"],
  base64url: ["base64url text", "base64url texts"],
  jwt: ["a JWT", "JWTs"],
  ipv4: ["an IPv4 address", "IPv4 addresses"],
  ipv6: ["an IPv6 address", "IPv6 addresses"],
};

const quote = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
};

/** The string format a schema checks (z.uuid(), or z.string().uuid() style checks). */
function formatOf(schema: Schema): string | undefined {
  const def = schema._zod.def;
  if (def.format) return def.format;
  const bag = schema._zod.bag?.format;
  if (typeof bag === "string") return bag;
  return def.checks?.map((c) => c._zod.def.format).find((f) => f && f !== "regex");
}

function exampleOf(schema: Schema | null): unknown {
  if (!schema) return undefined;
  try {
    const meta = getOpenApiMetadata(schema as never) as { example?: unknown; examples?: unknown[] } | undefined;
    if (meta?.example !== undefined) return meta.example;
    if (Array.isArray(meta?.examples) && meta.examples.length > 0) return meta.examples[0];
  } catch {
    // A schema the metadata reader does not know: no example.
  }
  return undefined;
}

/** What a value of the schema is, as a noun phrase ("a list of UUIDs"); plural for list elements. */
function noun(schema: Schema, plural = false, depth = 0): string {
  const { schema: inner, nullable } = unwrap(schema);
  const phrase = bareNoun(inner, plural, depth);
  return nullable && !plural ? `${phrase} or null` : phrase;
}

function bareNoun(schema: Schema, plural: boolean, depth: number): string {
  const def = schema._zod.def;
  const pick = (one: string, many: string) => (plural ? many : one);
  if (depth > 3) return pick("a value", "values");
  switch (def.type) {
    case "string": {
      const format = formatOf(schema);
      const nouns = format ? FORMAT_NOUNS[format] : undefined;
      return nouns ? pick(...nouns) : pick("text", "text values");
    }
    case "number": {
      const format = formatOf(schema);
      return format && /int/.test(format) ? pick("a whole number", "whole numbers") : pick("a number", "numbers");
    }
    case "bigint":
      return pick("a whole number", "whole numbers");
    case "boolean":
      return pick("true or false", "true or false values");
    case "null":
      return "null";
    case "array":
      return pick(`a list of ${noun(def.element!, true, depth + 1)}`, "lists");
    case "object":
    case "record":
      return pick("an object", "objects");
    case "enum": {
      const values = Object.values(def.entries ?? {});
      return `${plural ? "each " : ""}one of ${values.map((v) => quote(v)).join(", ")}`;
    }
    case "literal":
      return (def.values ?? []).map((v) => quote(v)).join(" or ");
    case "union":
      return [...new Set((def.options ?? []).map((o) => noun(o, plural, depth + 1)))].join(" or ");
    case "date":
      return pick("an ISO 8601 date-time", "ISO 8601 date-times");
    default:
      return pick("a value", "values");
  }
}

/** What the field must be, with an example when its schema shows one or its format has a usual one. */
function expectation(schema: Schema | null, issue: Issue): string {
  if (!schema)
    return (
      FALLBACK_NOUNS[issue.expected ?? ""] ??
      (issue.format ? (FORMAT_NOUNS[issue.format]?.[0] ?? `a valid ${issue.format}`) : "a valid value")
    );
  const described = noun(schema);
  const example = exampleOf(schema);
  const format = formatOf(unwrap(schema).schema);
  if (example !== undefined && example !== null) {
    return `${described} such as ${typeof example === "string" ? (format ? example : quote(example)) : JSON.stringify(example)}`;
  }
  if (format && FORMAT_EXAMPLES[format]) return `${described} such as ${FORMAT_EXAMPLES[format]}`;
  return described;
}

const FALLBACK_NOUNS: Record<string, string> = {
  string: "text",
  number: "a number",
  int: "a whole number",
  boolean: "true or false",
  array: "a list",
  object: "an object",
  null: "null",
};

/** The value the client sent, in words. */
function given(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return value.length === 0 ? "an empty list" : `a list of ${value.length}`;
  if (typeof value === "object") return "an object";
  if (typeof value === "boolean") return String(value);
  if (typeof value === "number") return Number.isNaN(value) ? "not a number" : `the number ${value}`;
  if (typeof value === "string") return value === "" ? "empty text" : `'${value.length > 60 ? `${value.slice(0, 57)}...` : value}'`;
  return typeof value;
}

const plural = (n: number | bigint, one: string, many = `${one}s`) => `${n} ${Number(n) === 1 ? one : many}`;

function sizeOf(value: unknown): number | null {
  if (typeof value === "string") return [...value].length;
  if (Array.isArray(value)) return value.length;
  return null;
}

/** The keys an object schema takes (for an unknown key's message). */
function keysOf(schema: Schema | null): string[] {
  if (!schema) return [];
  const { schema: inner } = unwrap(schema);
  return inner._zod.def.type === "object" ? Object.keys(inner._zod.def.shape ?? {}) : [];
}

/** True when the message is zod's default wording for the issue (not one a schema wrote). */
function isDefaultMessage(issue: Issue, input: unknown): boolean {
  if (issue.message === "Invalid input") return true;
  if (issue.code === "invalid_type" && /^Invalid input: expected \S+, received \S+$/.test(issue.message)) return true;
  const locale = z.locales.en().localeError as (issue: unknown) => string | { message: string } | undefined;
  const made = locale({ ...issue, input });
  return (typeof made === "string" ? made : made?.message) === issue.message;
}

/** The sentence for one issue; `own` tells whether it already names the field. */
function sentence(issue: Issue, target: Target, root: unknown, data: unknown): { message: string; own: boolean } {
  const input = valueAt(data, issue.path);
  if (!isDefaultMessage(issue, input)) return { message: issue.message, own: false };
  const name = fieldName(issue.path) || (WHOLE[target] ?? "The request");
  const schema = schemaAt(root, issue.path);
  const bound = (n: number | bigint | undefined) => (n === undefined ? "" : String(n));
  switch (issue.code) {
    case "invalid_type":
      if (input === undefined) return { message: `${name} is required: ${expectation(schema, issue)}.`, own: true };
      return { message: `${name} must be ${expectation(schema, issue)}, not ${given(input)}.`, own: true };
    case "invalid_union": {
      if (input === undefined) return { message: `${name} is required: ${expectation(schema, issue)}.`, own: true };
      // A value of one option's type that fails inside (an object with a bad field): say what is wrong inside.
      const inner = (issue.errors ?? []).find((branch) => branch.length > 0 && branch.every((i) => i.path.length > 0));
      if (inner) {
        const sentences = inner.map((i) => {
          const nested = { ...i, path: [...issue.path, ...i.path] };
          const said = sentence(nested, target, root, data);
          return said.own ? said.message : `${fieldName(nested.path)}: ${said.message}`;
        });
        return { message: sentences.join(" "), own: true };
      }
      return { message: `${name} must be ${expectation(schema, issue)}, not ${given(input)}.`, own: true };
    }
    case "invalid_format":
      if (issue.format === "regex" || issue.format === "starts_with" || issue.format === "ends_with" || issue.format === "includes") {
        return {
          message:
            `${name} ${given(input)} does not have the form this field ` +
            `takes${schema && exampleOf(schema) !== undefined ? `, such as ${quote(exampleOf(schema))}` : ""}.`,
          own: true,
        };
      }
      return { message: `${name} must be ${expectation(schema, issue)}, not ${given(input)}.`, own: true };
    case "too_small": {
      const size = sizeOf(input);
      if (issue.origin === "string") {
        if (Number(issue.minimum) === 1) return { message: `${name} must not be empty.`, own: true };
        return {
          message: `${name} must be at least ${plural(issue.minimum ?? 0, "character")} long${size !== null ? ` (it has ${size})` : ""}.`,
          own: true,
        };
      }
      if (issue.origin === "array" || issue.origin === "set") {
        if (Number(issue.minimum) === 1)
          return { message: `${name} must list at least one item${schema ? `: ${expectation(schema, issue)}` : ""}.`, own: true };
        return {
          message: `${name} must list at least ${plural(issue.minimum ?? 0, "item")}${size !== null ? ` (it has ${size})` : ""}.`,
          own: true,
        };
      }
      return {
        message: `${name} must be ${issue.inclusive === false ? "greater than" : "at least"} ${bound(issue.minimum)}, not ${given(input)}.`,
        own: true,
      };
    }
    case "too_big": {
      const size = sizeOf(input);
      if (issue.origin === "string")
        return {
          message: `${name} must be at most ${plural(issue.maximum ?? 0, "character")} long${size !== null ? ` (it has ${size})` : ""}.`,
          own: true,
        };
      if (issue.origin === "array" || issue.origin === "set")
        return {
          message: `${name} must list at most ${plural(issue.maximum ?? 0, "item")}${size !== null ? ` (it has ${size})` : ""}.`,
          own: true,
        };
      return {
        message: `${name} must be ${issue.inclusive === false ? "less than" : "at most"} ${bound(issue.maximum)}, not ${given(input)}.`,
        own: true,
      };
    }
    case "invalid_value": {
      const values = issue.values ?? [];
      if (values.length === 1) return { message: `${name} must be ${quote(values[0])}, not ${given(input)}.`, own: true };
      return { message: `${name} must be one of ${values.map((v) => quote(v)).join(", ")}, not ${given(input)}.`, own: true };
    }
    case "unrecognized_keys": {
      const keys = issue.keys ?? [];
      const known = keysOf(schema);
      const takes = known.length > 0 ? `; it takes ${known.join(", ")}` : "";
      return { message: `${name} does not take ${keys.length > 1 ? "the fields" : "the field"} ${keys.join(", ")}${takes}.`, own: true };
    }
    case "not_multiple_of":
      return { message: `${name} must be a multiple of ${issue.divisor}, not ${given(input)}.`, own: true };
    case "invalid_key":
      return { message: `${name} has a key that is not valid: ${expectation(schema, issue)} is expected.`, own: true };
    case "invalid_element":
      return { message: `${name} holds a value that is not valid.`, own: true };
    default:
      return { message: `${name} is not valid.`, own: true };
  }
}

const VALIDATION_TARGET_NAMES: Record<string, string> = { json: "body", query: "query", param: "path", header: "header", form: "body" };

/**
 * zod issues as field problems: `field` and `rule` as clients rely on them, `message` a sentence;
 * and the problem's `detail`, every sentence in one.
 */
export function fieldProblems(
  c: Context | undefined,
  target: Target,
  issues: readonly Issue[],
  data: unknown,
): { errors: FieldProblem[]; detail: string } {
  const root = c ? (c as Context<AppEnv>).get("requestSchemas")?.[target] : undefined;
  const prefix = VALIDATION_TARGET_NAMES[target] ?? target;
  const details: string[] = [];
  const errors = issues.map((issue) => {
    const { message, own } = sentence(issue, target, root, data);
    const field = [prefix, ...issue.path.map(String)].join(".");
    const text = own ? message : `${fieldName(issue.path) || prefix}: ${message}`;
    details.push(/[.!?]$/.test(text) ? text : `${text}.`);
    return { field, rule: issue.code === "custom" ? String(issue.params?.rule ?? "custom") : issue.code, message };
  });
  return { errors, detail: details.join(" ") };
}
