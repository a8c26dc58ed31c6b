/**
 * What the OpenAPI document gets after it is generated from the route schemas: the list grammar where
 * a list described `properties` or `order` in its own words, and, for the reference page only, its
 * parameters' examples shown in their descriptions instead of filled in.
 */
import { ORDER_GRAMMAR, PROPERTIES_GRAMMAR } from "../pkg/query";

/** The parts of an OpenAPI document (3.0 or 3.1) these steps read: operations and their parameters. */
interface DocumentShape {
  paths?: Record<string, Record<string, unknown> | undefined>;
  components?: { parameters?: Record<string, unknown> };
}

interface Parameter {
  name?: string;
  in?: string;
  description?: string;
  example?: unknown;
  examples?: unknown;
  schema?: { description?: string; example?: unknown; examples?: unknown };
}

const METHODS = ["get", "put", "post", "delete", "patch", "head", "options", "trace"];

/** Every parameter object written out in the document (the operations' own and the shared components). */
function* parametersOf(document: DocumentShape): Generator<Parameter> {
  for (const item of Object.values(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item?.[method] as { parameters?: unknown[] } | undefined;
      for (const parameter of operation?.parameters ?? []) {
        if (parameter && typeof parameter === "object" && !("$ref" in parameter)) yield parameter as Parameter;
      }
    }
  }
  for (const parameter of Object.values(document.components?.parameters ?? {})) {
    if (parameter && typeof parameter === "object") yield parameter as Parameter;
  }
}

const GRAMMARS: Record<string, string> = { properties: PROPERTIES_GRAMMAR, order: ORDER_GRAMMAR };

/**
 * Every list's `properties` and `order` carry the shared grammar: a list that describes one in its own
 * words (its fields, its default) keeps them, and the grammar follows unless its description has it.
 */
export function withListGrammar<D extends object>(document: D): D {
  for (const parameter of parametersOf(document as DocumentShape)) {
    const grammar = parameter.in === "query" && parameter.name ? GRAMMARS[parameter.name] : undefined;
    if (!grammar || parameter.description?.includes(grammar)) continue;
    parameter.description = parameter.description ? `${parameter.description.trim()}\n\nAs on every list: ${grammar}` : grammar;
    if (parameter.schema?.description !== undefined) parameter.schema.description = parameter.description;
  }
  return document;
}

/** An example as a reader types it: a string as it is, anything else as JSON. */
function shown(example: unknown): string {
  return typeof example === "string" ? example : JSON.stringify(example);
}

/**
 * The document as the reference page (/docs) shows it: Swagger UI fills a parameter with its example
 * when "Try it out" is pressed, so a list was filtered by example ids and answered `[]`, and every POST
 * sent the example Idempotency-Key, which made any second POST a 422. Here each parameter's example
 * moves into its description (`Example: ...`), shown but not filled in; request bodies keep theirs.
 */
export function forReferencePage<D extends object>(document: D): D {
  for (const parameter of parametersOf(document as DocumentShape)) {
    const examples = parameter.examples && typeof parameter.examples === "object" ? Object.values(parameter.examples) : [];
    const example =
      parameter.example ??
      parameter.schema?.example ??
      (examples[0] as { value?: unknown } | undefined)?.value ??
      (Array.isArray(parameter.schema?.examples) ? parameter.schema.examples[0] : undefined);
    delete parameter.example;
    delete parameter.examples;
    if (parameter.schema) {
      delete parameter.schema.example;
      delete parameter.schema.examples;
    }
    if (example === undefined || example === "") continue;
    const note = `Example: \`${shown(example)}\``;
    parameter.description = parameter.description ? `${parameter.description.trim()}\n\n${note}` : note;
  }
  return document;
}
