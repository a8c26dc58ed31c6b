/**
 * zod schemas of the common list query parameters, for routes to spread into their query schema
 * so every list documents them the same way. They only describe and coerce; the query engine
 * validates the content and answers InvalidQuery with the offending term.
 *
 * @example
 * request: { query: ListQuerySchema.extend({ statuses: z.string().optional() }) }
 */
import { z } from "@hono/zod-openapi";
import { DEFAULT_TAKE, MAX_TAKE } from "./params";
import { MAX_FILTER_TERMS, MAX_FILTER_VALUES } from "./filter";

const ids = z.string().optional().openapi({
  description: "Only these entities: comma-separated ids (any number).",
  example: "0b9f3c5e-8a4f-4d6c-9a51-2c1f0e6a7b10,5f0c2b7e-3d1a-4e8b-9c6f-7a2d1e0b3c4d",
});

const excludeIds = z
  .string()
  .optional()
  .openapi({ description: "Leave these entities out: comma-separated ids (any number).", example: "0b9f3c5e-8a4f-4d6c-9a51-2c1f0e6a7b10" });

/**
 * The grammar of `properties`, the property filter every list that takes it shares. A list that
 * describes the parameter in its own words keeps this sentence in its description (the OpenAPI
 * document adds it where a list left it out: src/docs/document.ts).
 */
export const PROPERTIES_GRAMMAR =
  "Property filter: `{propertyName} {eq|ne|gt|ge|lt|le|in} {value}` terms joined by `and`/`or` (`and` binds tighter; " +
  "parentheses group). Text, date, classification and entity values in single quotes (a quote inside is doubled: " +
  "'O''Brien'); numbers, true, false and null without; `in` takes a parenthesised list. Dates: ISO 8601 or " +
  `'MM/dd/yyyy HH:mm[:ss]', UTC. At most ${MAX_FILTER_TERMS} terms and ${MAX_FILTER_VALUES} values.`;

/** The grammar of `order`, shared by every list (as {@link PROPERTIES_GRAMMAR}, kept in a list's own description). */
export const ORDER_GRAMMAR =
  "Comma-separated `{field} [asc|desc]` terms (default asc; no limit on terms): canonical fields (nested with dots), " +
  "`properties.{name}`, or for a classification property " +
  "`properties.{name}.{name|displayName|code|applierCode|color|order|grade}`. " +
  "Multiselect properties cannot be ordered by. Nulls sort last in both directions; ties are broken by id.";

/** Fields of the common list query, to spread into a route's own `z.object({...})`. */
export const listQueryShape = {
  ids,
  excludeIds,
  searchText: z
    .string()
    .optional()
    .openapi({ description: "Case-insensitive (ASCII) substring searched in the list's text fields.", example: "corrosion" }),
  properties: z.string().optional().openapi({
    description: PROPERTIES_GRAMMAR,
    example: "Depth gt 2.5 and (Material eq 'O''Brien steel' or Inspected ge '2024-03-15') and Zone in ('A', 'B')",
  }),
  order: z.string().optional().openapi({ description: ORDER_GRAMMAR, example: "properties.Risk.grade desc, referenceId asc" }),
  skip: z.coerce
    .number()
    .int()
    .min(0)
    .optional()
    .openapi({ description: "Skip the first n entities of the ordered list. Default 0.", example: 0 }),
  take: z.coerce
    .number()
    .int()
    .min(0)
    .max(MAX_TAKE)
    .optional()
    .openapi({ description: `Return at most n entities. Default ${DEFAULT_TAKE}, at most ${MAX_TAKE}.`, example: DEFAULT_TAKE }),
  includeTotal: z
    .enum(["true", "false"])
    .optional()
    .openapi({
      description:
        "true: also count every entity that matches (before skip and take) and return the count in the X-Total-Count header. " +
        "Default false: the count costs time proportional to the number of matches, while a page costs time proportional to its size.",
      example: "true",
    }),
};

/** The common list query: ids, excludeIds, searchText, properties, order, skip, take, includeTotal. */
export const ListQuerySchema = z.object(listQueryShape);

/** Fields of the unique values query, to spread into a route's own `z.object({...})`. */
export const uniqueValuesQueryShape = {
  fieldNames: z
    .string()
    .optional()
    // Optional for zod so that a missing value reaches the engine and is answered as InvalidQuery
    // like every other query mistake; documented as required.
    .openapi({
      param: { required: true },
      description: "Required. Comma-separated field names; property fields use the prefix `properties.`.",
      example: "status,objectOwner,properties.Risk",
    }),
  ids,
  excludeIds,
};

/** The unique values query: fieldNames (required), ids, excludeIds. */
export const UniqueValuesQuerySchema = z.object(uniqueValuesQueryShape);

/** One unique value: a human-readable name and a value usable in a filter. */
export const UniqueValueSchema = z
  .object({
    displayName: z.string().openapi({ example: "Jane Doe" }),
    value: z.union([z.string(), z.number(), z.boolean()]).openapi({ example: "5f0c2b7e-3d1a-4e8b-9c6f-7a2d1e0b3c4d" }),
  })
  .openapi("UniqueValue");

/** The unique values answer: one entry per requested field. */
export const UniqueValuesResponseSchema = z
  .array(z.object({ fieldName: z.string().openapi({ example: "objectOwner" }), values: z.array(UniqueValueSchema) }))
  .openapi("UniqueValues");
