/**
 * References from one operation to an earlier one's answer: `{{id.body.field.0.name}}`,
 * `{{id.headers.etag}}`, `{{id.status}}`, in an operation's path, header values and body strings
 * (never in keys). A body string that is one reference and nothing else takes the value with its JSON
 * type; a reference inside longer text (or a path, or a header) is replaced by the value's text, which
 * must then be text, a number or a boolean; in a path it is percent-encoded.
 */
import { ApiError, type FieldProblem } from "../pkg/errors";
import type { BatchOperation } from "./schema";

const REFERENCE = /\{\{([^{}]*)\}\}/g;
const WHOLE = /^\{\{([^{}]*)\}\}$/;
const ROOTS = ["status", "headers", "body"];

/** An earlier operation's answer, as a later one may use it. */
export interface Answer {
  ran: boolean;
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

interface Reference {
  id: string;
  root: string;
  segments: string[];
}

function parse(text: string): Reference | string {
  const [id = "", root = "", ...segments] = text.split(".");
  if (!id || !ROOTS.includes(root)) {
    return `'{{${text}}}' is not a reference: write {{id.body.field}}, {{id.headers.name}} or {{id.status}}, id an earlier operation's.`;
  }
  if (root === "status" && segments.length > 0) return `'{{${text}}}': status has no fields.`;
  if (root === "headers" && segments.length !== 1) return `'{{${text}}}': name one header, as {{${id}.headers.etag}}.`;
  if (segments.some((s) => s === "")) return `'{{${text}}}' has an empty field name.`;
  return { id, root, segments };
}

/** Every string of an operation that may hold references, with the field that names it in a problem. */
function* placesOf(op: BatchOperation, at: string): Generator<[field: string, text: string]> {
  yield [`${at}.path`, op.path];
  for (const [name, value] of Object.entries(op.headers ?? {})) yield [`${at}.headers.${name}`, value];
  yield* stringsIn(op.body, `${at}.body`);
}

function* stringsIn(value: unknown, field: string): Generator<[string, string]> {
  if (typeof value === "string") yield [field, value];
  else if (Array.isArray(value)) for (let i = 0; i < value.length; i++) yield* stringsIn(value[i], `${field}.${i}`);
  else if (value !== null && typeof value === "object") for (const [k, v] of Object.entries(value)) yield* stringsIn(v, `${field}.${k}`);
}

/**
 * The problems with the references of operation `index` (field paths under `at`): each must be well
 * formed and name an operation that comes before it.
 */
export function referenceProblems(op: BatchOperation, at: string, earlier: ReadonlySet<string>): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const [field, text] of placesOf(op, at)) {
    for (const match of text.matchAll(REFERENCE)) {
      const parsed = parse(match[1]!);
      if (typeof parsed === "string") problems.push({ field, rule: "reference", message: parsed });
      else if (!earlier.has(parsed.id)) {
        problems.push({
          field,
          rule: "reference",
          message: `'${match[0]}' refers to '${parsed.id}', which is not an operation before '${op.id}' in this batch.`,
        });
      }
    }
  }
  return problems;
}

/** The operation with its references replaced by the answers they name; an ApiError (424 or 400) when one cannot be used. */
export function resolved(op: BatchOperation, at: string, answers: ReadonlyMap<string, Answer>): BatchOperation {
  const valueOf = (text: string, field: string): unknown => {
    const ref = parse(text) as Reference; // checked before the batch ran (referenceProblems)
    const answer = answers.get(ref.id)!;
    if (!answer.ran || answer.status >= 400) {
      const why = answer.ran ? `answered ${answer.status}` : "was not run";
      throw new ApiError("FailedDependency", `Not run: '{{${text}}}' refers to operation '${ref.id}', which ${why}.`, {
        errors: [{ field, rule: "reference", message: `Operation '${ref.id}' ${why}.` }],
      });
    }
    let value: unknown = ref.root === "status" ? answer.status : ref.root === "headers" ? answer.headers : answer.body;
    for (const segment of ref.segments) {
      const name = ref.root === "headers" ? segment.toLowerCase() : segment;
      value =
        value !== null && typeof value === "object" && Object.hasOwn(value, name) ? (value as Record<string, unknown>)[name] : undefined;
    }
    if (value === undefined) {
      const message = `'{{${text}}}': the answer of operation '${ref.id}' has no ${[ref.root, ...ref.segments].join(".")}.`;
      throw new ApiError("ValidationFailed", message, { errors: [{ field, rule: "reference", message }] });
    }
    return value;
  };
  const asText = (text: string, field: string, encode: boolean): string =>
    text.replace(REFERENCE, (_, inner: string) => {
      const value = valueOf(inner, field);
      if (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean") {
        const what = value === null ? "null" : "an object or a list";
        const message = `'{{${inner}}}' is ${what}: inside text, a reference must be text, a number or a boolean.`;
        throw new ApiError("ValidationFailed", message, { errors: [{ field, rule: "reference", message }] });
      }
      return encode ? encodeURIComponent(String(value)) : String(value);
    });
  const inBody = (value: unknown, field: string): unknown => {
    if (typeof value === "string") {
      const whole = WHOLE.exec(value);
      return whole ? valueOf(whole[1]!, field) : value.includes("{{") ? asText(value, field, false) : value;
    }
    if (Array.isArray(value)) return value.map((v, i) => inBody(v, `${field}.${i}`));
    if (value !== null && typeof value === "object") {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, inBody(v, `${field}.${k}`)]));
    }
    return value;
  };
  return {
    ...op,
    path: asText(op.path, `${at}.path`, true),
    headers: Object.fromEntries(Object.entries(op.headers ?? {}).map(([k, v]) => [k, asText(v, `${at}.headers.${k}`, false)])),
    body: op.body === undefined ? undefined : inBody(op.body, `${at}.body`),
  };
}
