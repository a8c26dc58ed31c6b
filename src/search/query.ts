/**
 * The search request (a saved query's `queryObject`, or the body of `POST /Indices/{id}/Search`) and
 * its compilation to SQL over one index's documents (durable-objects/search-index.ts): free text
 * through SQLite FTS5, field filters with the grammar of section 4.1 (the list engine's parser),
 * ordering by fields or relevance, paging, facets. Every client value is a bound parameter; field
 * names are resolved against the mapping before they reach a JSON path, which is bound as well.
 */
import { z } from "@hono/zod-openapi";
import { ApiError } from "../pkg/errors";
import { ME_LITERAL, parseFilter, parseOrder, type FilterLiteral, type FilterNode } from "../pkg/query";
import { resolveField, type Mapping } from "./mapping";
import { generationTables } from "./generations";

export const MAX_SEARCH_TAKE = 200;
export const DEFAULT_SEARCH_TAKE = 20;
const MAX_TEXT = 500;
const MAX_FACETS = 10;
export const FACET_VALUES = 50;

export const SearchRequestSchema = z
  .object({
    text: z.string().max(MAX_TEXT).optional().openapi({
      description: "Free text: words (all must match), prefixes (`pum*`), phrases in double quotes; case and accents are ignored.",
      example: "corrosion pum*",
    }),
    filter: z
      .string()
      .max(8000)
      .optional()
      .openapi({
        description:
          "Field filter, grammar of section 4.1 over mapping fields (`status eq 'open' and objectOwner eq me`); `me` on " +
          "an isIdentity field is the caller.",
        example: "status eq 'open'",
      }),
    order: z.string().max(2000).optional().openapi({
      description: "`{field} asc|desc, ...` over mapping fields, or `relevance` (the default with text; otherwise by document id).",
      example: "relevance, updatedAt desc",
    }),
    skip: z.number().int().min(0).max(100_000).optional(),
    take: z
      .number()
      .int()
      .min(1)
      .max(MAX_SEARCH_TAKE)
      .optional()
      .openapi({ description: `Default ${DEFAULT_SEARCH_TAKE}, at most ${MAX_SEARCH_TAKE}.` }),
    facets: z
      .array(z.string().max(64))
      .max(MAX_FACETS)
      .optional()
      .openapi({ description: `Fields to count values of (at most ${MAX_FACETS}; the ${FACET_VALUES} most frequent values each).` }),
    fields: z
      .array(z.string().max(64))
      .max(200)
      .optional()
      .openapi({ description: 'Fields to return; default the alwaysShow fields; `["*"]` every field.' }),
    highlight: z.boolean().optional().openapi({ description: "Mark the matched words in the returned text fields (default true)." }),
  })
  .strict()
  .openapi("SearchRequest");
export type SearchRequest = z.infer<typeof SearchRequestSchema>;

export const SearchResultSchema = z
  .object({
    index: z.object({ id: z.string(), name: z.string() }),
    total: z.number().int(),
    skip: z.number().int(),
    take: z.number().int(),
    results: z.array(
      z.object({
        id: z.string(),
        score: z.number().nullable().openapi({ description: "Relevance (higher is better) when text was given." }),
        fields: z.record(z.string(), z.unknown()),
        highlights: z
          .record(z.string(), z.string())
          .optional()
          .openapi({ description: "Text fields with the matched words in <mark></mark> (the rest of the text HTML-escaped)." }),
      }),
    ),
    facets: z.record(z.string(), z.array(z.object({ value: z.unknown(), count: z.number().int() }))).optional(),
  })
  .openapi("SearchResult");
export type SearchResult = z.infer<typeof SearchResultSchema>;

/** Who searches: decides what `me` stands for, and which documents they see. */
export interface Searcher {
  id: string;
  name: string;
  /** The caller's permissions: a document is seen only by a holder of every permission it carries (src/search/access.ts). */
  permissions: readonly string[];
}

/** A request checked against a mapping: every field resolved, the text turned into an FTS5 query. */
export interface PlannedSearch {
  match: string | null;
  terms: string[];
  filter: FilterNode | undefined;
  order: { field: string | null; direction: "asc" | "desc" }[];
  skip: number;
  take: number;
  facets: string[];
  fields: string[];
  highlight: boolean;
}

function invalidField(field: string, rule: string, message: string): ApiError {
  return new ApiError("ValidationFailed", message, { errors: [{ field, rule, message }] });
}

/**
 * Free text to an FTS5 query: each word or quoted phrase becomes a quoted FTS5 string (so no FTS5
 * syntax from the client is interpreted), a trailing `*` a prefix; all must match. Also returns the
 * plain terms, for highlighting.
 */
export function ftsQuery(text: string | undefined, field = "body.text"): { match: string | null; terms: string[] } {
  if (!text || text.trim() === "") return { match: null, terms: [] };
  const parts: string[] = [];
  const terms: string[] = [];
  const pattern = /"([^"]*)"?|(\S+)/g;
  for (const m of text.matchAll(pattern)) {
    const raw = m[1] ?? m[2] ?? "";
    const prefix = m[1] === undefined && raw.endsWith("*");
    // Keep letters, digits and marks; anything else separates words, as the tokenizer does.
    const words = raw
      .normalize("NFC")
      .split(/[^\p{L}\p{N}\p{M}]+/u)
      .filter(Boolean);
    if (words.length === 0) continue;
    terms.push(...words);
    const quoted = `"${words.join(" ")}"`;
    parts.push(prefix ? `${quoted} *` : quoted);
  }
  if (parts.length > 32) throw invalidField(field, "maxTerms", "Free text has at most 32 words and phrases.");
  return { match: parts.length === 0 ? null : parts.join(" AND "), terms };
}

const fieldList = (mapping: Mapping, names: readonly string[], what: string) =>
  names.map((name, i) => {
    const resolved = resolveField(mapping, name);
    if (!resolved)
      throw invalidField(
        `${what}[${i}]`,
        "unknownField",
        `'${name}' is not a field of this index; its fields are ${Object.keys(mapping).slice(0, 60).join(", ")}.`,
      );
    return resolved;
  });

/** Checks a request against an index's mapping (unknown fields name themselves) and plans it. */
export function planSearch(mapping: Mapping, request: SearchRequest, path = "body"): PlannedSearch {
  const { match, terms } = ftsQuery(request.text, `${path}.text`);
  let filter: FilterNode | undefined;
  try {
    filter = parseFilter(request.filter, { acceptMe: true });
  } catch (error) {
    if (error instanceof ApiError)
      throw new ApiError("ValidationFailed", error.message, {
        errors: [{ field: `${path}.filter`, rule: "syntax", message: error.message }],
      });
    throw error;
  }
  const resolveTerm = (node: FilterNode): FilterNode => {
    if (node.kind !== "term") return { ...node, children: node.children.map(resolveTerm) };
    const field = resolveField(mapping, node.property);
    if (!field)
      throw invalidField(
        `${path}.filter`,
        "unknownField",
        `Filter term '${node.text}': '${node.property}' is not a field of this index; its fields are ` +
          `${Object.keys(mapping).slice(0, 60).join(", ")}.`,
      );
    const type = mapping[field]!.type;
    for (const v of node.values) {
      if (v.kind === "null") continue;
      const isMe = v.kind === "string" && v.value === ME_LITERAL;
      const ok = isMe
        ? mapping[field]!.isIdentity === true
        : type === "number"
          ? v.kind === "number"
          : type === "boolean"
            ? v.kind === "boolean"
            : v.kind === "string";
      if (!ok) {
        const hint = type === "number" ? "write a number" : type === "boolean" ? "write true or false" : "quote the value in single quotes";
        const why = isMe ? `'me' applies only to identity fields` : `'${field}' is a ${type} field; ${hint}`;
        throw invalidField(`${path}.filter`, "type", `Filter term '${node.text}': ${why}.`);
      }
    }
    return { ...node, property: field };
  };
  if (filter) filter = resolveTerm(filter);
  const order = parseOrderOrRelevance(mapping, request.order, path);
  const facets = fieldList(mapping, request.facets ?? [], `${path}.facets`);
  const all = request.fields?.length === 1 && request.fields[0] === "*";
  const fields = all
    ? Object.keys(mapping)
    : request.fields
      ? fieldList(mapping, request.fields, `${path}.fields`)
      : Object.keys(mapping).filter((k) => mapping[k]!.alwaysShow);
  return {
    match,
    terms,
    filter,
    order,
    skip: request.skip ?? 0,
    take: request.take ?? DEFAULT_SEARCH_TAKE,
    facets,
    fields,
    highlight: request.highlight ?? true,
  };
}

function parseOrderOrRelevance(mapping: Mapping, text: string | undefined, path: string): PlannedSearch["order"] {
  let requests;
  try {
    requests = parseOrder(text);
  } catch (error) {
    if (error instanceof ApiError)
      throw new ApiError("ValidationFailed", error.message, {
        errors: [{ field: `${path}.order`, rule: "syntax", message: error.message }],
      });
    throw error;
  }
  return requests.map((r) => {
    if (r.field.toLowerCase() === "relevance") return { field: null, direction: r.direction };
    const field = resolveField(mapping, r.field);
    if (!field)
      throw invalidField(
        `${path}.order`,
        "unknownField",
        `Order term ${r.index}: '${r.field}' is not a field of this index (or 'relevance').`,
      );
    return { field, direction: r.direction };
  });
}

/** The bound JSON path of a field (names are checked identifiers, the path is still a parameter). */
const pathOf = (field: string) => `$.${field}`;

/** Numbered parameters (`?1`, `?2`...), so an expression can use one twice and order does not matter. */
class Params {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `?${this.values.length}`;
  }
}

/** A field's value(s) as rows: a scalar is one row, an array one row per element. */
function literal(v: FilterLiteral, searcher: Searcher, params: Params): string[] {
  if (v.kind === "string" && v.value === ME_LITERAL) return [params.add(searcher.id), params.add(searcher.name)];
  if (v.kind === "boolean") return [params.add(v.value ? 1 : 0)];
  return [params.add(v.kind === "null" ? null : v.value)];
}

function filterSql(node: FilterNode, mapping: Mapping, searcher: Searcher, params: Params): string {
  if (node.kind !== "term")
    return `(${node.children.map((c) => filterSql(c, mapping, searcher, params)).join(node.kind === "and" ? " AND " : " OR ")})`;
  const path = params.add(pathOf(node.property));
  const type = mapping[node.property]!.type;
  const isNull = node.values.length === 1 && node.values[0]!.kind === "null";
  if (isNull && (node.operator === "eq" || node.operator === "ne")) {
    return `(json_type(m.fields, ${path}) IS ${node.operator === "eq" ? "" : "NOT "}NULL)`;
  }
  // Text comparisons ignore case, as the list filters do; an array matches when any element does.
  const value = type === "text" || type === "keyword" ? "lower(j.value)" : "j.value";
  const cmp = (sqlValue: string) => (type === "text" || type === "keyword" ? `lower(${sqlValue})` : sqlValue);
  const each = (condition: string) => `EXISTS (SELECT 1 FROM json_each(m.fields, ${path}) j WHERE ${condition})`;
  const values = node.values.flatMap((v) => literal(v, searcher, params)).map(cmp);
  switch (node.operator) {
    case "eq":
    case "in":
      return each(`${value} IN (${values.join(", ")})`);
    case "ne":
      return `NOT ${each(`${value} IN (${values.join(", ")})`)}`;
    default: {
      const op = { gt: ">", ge: ">=", lt: "<", le: "<=" }[node.operator];
      return each(`${value} ${op} ${values[0]}`);
    }
  }
}

export interface CompiledSearch {
  /** The page's rowids in order, with their score. */
  page: { sql: string; params: unknown[] };
  /** The number of matches (skipped when the page itself shows it: a first page shorter than take). */
  count: { sql: string; params: unknown[] };
  facets: { field: string; sql: string; params: unknown[] }[];
}

/**
 * Compiles a planned search over one generation's tables: `docs_N` (rowid, key, fields, permission)
 * and the FTS5 table `fts_N` (rowid = the document's). Which documents a caller may see: when the
 * index holds documents needing a permission the caller lacks, `visible` lists the permission values
 * (documents' `permission`) the caller may see and every part of the query keeps to documents with
 * one of them or none (page, count and facets alike); undefined, when the caller sees them all. A
 * text-only query of such a caller never reads `docs_N` until the page is known; the full-text match
 * always drives the join (CROSS JOIN), never a walk of every document.
 */
export function compileSearch(
  plan: PlannedSearch,
  mapping: Mapping,
  searcher: Searcher,
  generation: number,
  visible?: readonly string[],
): CompiledSearch {
  const { docs, fts } = generationTables(generation);
  const needsDocs = plan.filter !== undefined || plan.order.some((o) => o.field !== null) || visible !== undefined;
  const build = (facetField?: string) => {
    const params = new Params();
    const join = needsDocs || facetField !== undefined;
    // The FTS5 table keeps its own name (no alias): MATCH and bm25() take the table's name.
    const tables = plan.match ? (join ? `${fts} CROSS JOIN ${docs} m ON m.rowid = ${fts}.rowid` : fts) : `${docs} m`;
    const each = facetField ? `, json_each(m.fields, ${params.add(pathOf(facetField))}) j` : "";
    const where: string[] = [];
    if (plan.match) where.push(`${fts} MATCH ${params.add(plan.match)}`);
    if (plan.filter) where.push(filterSql(plan.filter, mapping, searcher, params));
    if (visible !== undefined)
      where.push(`(m.permission IS NULL OR m.permission IN (SELECT value FROM json_each(${params.add(JSON.stringify(visible))})))`);
    return { params, sql: `FROM ${tables}${each}${where.length > 0 ? ` WHERE ${where.join(" AND ")}` : ""}` };
  };
  const base = build();
  const p = base.params;
  const orderTerms = plan.order.length > 0 ? plan.order : plan.match ? [{ field: null, direction: "asc" as const }] : [];
  const orderSql = orderTerms.map((o) => {
    // Relevance asc means best first (the natural reading); desc reverses it.
    if (o.field === null) return plan.match ? `bm25(${fts}) ${o.direction === "asc" ? "ASC" : "DESC"}` : "rid ASC";
    const type = mapping[o.field]!.type;
    const path = p.add(pathOf(o.field));
    // An array sorts by its first element; text ignores case.
    const value =
      `CASE json_type(m.fields, ${path}) WHEN 'array' THEN json_extract(m.fields, ${p.add(pathOf(o.field) + "[0]")}) ` +
      `ELSE json_extract(m.fields, ${path}) END`;
    const sortable = type === "text" || type === "keyword" ? `lower(${value})` : value;
    return `${sortable} IS NULL, ${sortable} ${o.direction.toUpperCase()}`;
  });
  const withDocs = needsDocs || !plan.match;
  // Ties: by key when the documents are read anyway, else by rowid (the order they were indexed in).
  orderSql.push(withDocs ? "key ASC" : "rid ASC");
  const rid = plan.match ? `${fts}.rowid` : "m.rowid";
  const score = plan.match ? `-bm25(${fts})` : "NULL";
  const page = {
    sql:
      `SELECT ${rid} AS rid, ${score} AS score${withDocs ? ", m.key AS key, m.fields AS fields" : ""} ${base.sql} ` +
      `ORDER BY ${orderSql.join(", ")} LIMIT ${p.add(plan.take)} OFFSET ${p.add(plan.skip)}`,
    params: p.values,
  };
  const countBase = build();
  const count = { sql: `SELECT count(*) AS n ${countBase.sql}`, params: countBase.params.values };
  const facets = plan.facets.map((field) => {
    const b = build(field);
    return {
      field,
      sql:
        `SELECT j.value AS value, count(DISTINCT m.rowid) AS n ${b.sql}${b.sql.includes(" WHERE ") ? " AND" : " WHERE"} ` +
        `j.value IS NOT NULL GROUP BY j.value ORDER BY n DESC, j.value LIMIT ${FACET_VALUES}`,
      params: b.params.values,
    };
  });
  return { page, count, facets };
}

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
const fold = (s: string) => s.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase();

/**
 * Marks the words of `text` that match a search term (whole word, or word prefix for the last term
 * of a prefix query, case and accent insensitive like the index). Returns undefined when none match.
 */
export function highlight(text: string, terms: readonly string[], maxChars = 300): string | undefined {
  if (terms.length === 0) return undefined;
  const wanted = terms.map(fold);
  const words = [...text.matchAll(/[\p{L}\p{N}\p{M}]+/gu)];
  const hits = words.filter((w) => {
    const f = fold(w[0]);
    return wanted.some((t) => f === t || f.startsWith(t));
  });
  if (hits.length === 0) return undefined;
  const first = hits[0]!.index!;
  const start = text.length <= maxChars ? 0 : Math.max(0, first - 60);
  const end = Math.min(text.length, start + maxChars);
  let out = start > 0 ? "…" : "";
  let at = start;
  for (const h of hits) {
    const i = h.index!;
    if (i < at || i + h[0].length > end) continue;
    out += escapeHtml(text.slice(at, i)) + "<mark>" + escapeHtml(h[0]) + "</mark>";
    at = i + h[0].length;
  }
  out += escapeHtml(text.slice(at, end)) + (end < text.length ? "…" : "");
  return out;
}
