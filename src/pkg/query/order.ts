/**
 * The `order` query parameter: `{field} [asc|desc], ...` over canonical fields, `properties.X`, and
 * for classification properties `properties.X.{name|displayName|code|applierCode|color|order|grade}`.
 *
 * Decisions: direction and canonical field names are case-insensitive, property names are not;
 * empty terms (`a,,b`, a trailing comma) are ignored; a field ordered twice keeps its first
 * position (a later term on the same field cannot change the order). Nulls (and entities without
 * the property) sort last in both directions. Every order ends with the list's id ascending, so
 * pages are stable. When `properties.a.code` could mean the property `a.code` or the element field
 * `code` of property `a`, the property `a.code` wins if it exists.
 */
import type { ListDefinition } from "./list";
import { queryError, quote } from "./problems";
import type { SqlValues } from "./sql-values";
import type { PropertyInfo } from "./types";

export type OrderDirection = "asc" | "desc";

export interface OrderRequest {
  /** The field as written, e.g. `properties.Risk.grade`. */
  field: string;
  direction: OrderDirection;
  /** 1-based index of the term, for messages. */
  index: number;
}

const ELEMENT_FIELDS = {
  name: "name",
  displayname: "displayName",
  code: "code",
  appliercode: "applierCode",
  color: "color",
  order: "order",
  grade: "grade",
} as const;
export type ElementField = (typeof ELEMENT_FIELDS)[keyof typeof ELEMENT_FIELDS];

export type ResolvedOrder =
  | { kind: "field"; name: string; column: string; joins: readonly string[]; direction: OrderDirection; indexed: boolean }
  | { kind: "property"; property: PropertyInfo; element: ElementField; direction: OrderDirection };

/** Property joins beyond this many are written as correlated subqueries: SQLite joins at most 64 tables. */
export const MAX_ORDER_JOINS = 32;

const PREFIX = "properties.";

/** Parses the order text (syntax only). A blank text gives []. Throws InvalidQuery. */
export function parseOrder(text: string | undefined): OrderRequest[] {
  if (!text) return [];
  const requests: OrderRequest[] = [];
  text.split(",").forEach((raw, i) => {
    const term = raw.trim();
    if (term === "") return;
    const [field, direction, extra] = term.split(/\s+/);
    const dir = (direction ?? "asc").toLowerCase();
    if (field === undefined || extra !== undefined || (dir !== "asc" && dir !== "desc")) {
      throw queryError("query.order", "syntax", `Order term ${i + 1}, ${quote(term)}, must be '{field} asc' or '{field} desc'.`);
    }
    requests.push({ field, direction: dir, index: i + 1 });
  });
  return requests;
}

/** The property names the catalog must be asked for to resolve these terms. */
export function orderPropertyCandidates(requests: readonly OrderRequest[]): string[] {
  return requests.flatMap((r) => {
    const rest = propertyPart(r.field);
    if (rest === undefined) return [];
    const split = splitElement(rest);
    return split ? [rest, split.property] : [rest];
  });
}

/** Resolves terms against the list's fields and the property definitions; duplicates are dropped. */
export function resolveOrder(
  requests: readonly OrderRequest[],
  list: ListDefinition,
  catalog: ReadonlyMap<string, PropertyInfo>,
): ResolvedOrder[] {
  const seen = new Set<string>();
  const resolved: ResolvedOrder[] = [];
  for (const request of requests) {
    const order = resolveOne(request, list, catalog);
    const key = order.kind === "field" ? `f:${order.name}` : `p:${order.property.name}:${order.element}`;
    if (seen.has(key)) continue;
    seen.add(key);
    resolved.push(order);
  }
  return resolved;
}

function resolveOne(request: OrderRequest, list: ListDefinition, catalog: ReadonlyMap<string, PropertyInfo>): ResolvedOrder {
  const where = `Order term ${request.index}, ${quote(request.field)}`;
  const rest = propertyPart(request.field);
  if (rest === undefined) {
    const field = list.field(request.field);
    if (!field) throw queryError("query.order", "unknownField", `${where}: the list has no field ${quote(request.field)}.`);
    if (field.definition.orderable === false)
      throw queryError("query.order", "notOrderable", `${where}: the list cannot be ordered by ${quote(field.name)}.`);
    const { column, joins = [], indexed = false } = field.definition;
    return { kind: "field", name: field.name, column, joins, direction: request.direction, indexed: indexed && joins.length === 0 };
  }
  let property = catalog.get(rest);
  let element: ElementField = "name";
  const split = splitElement(rest);
  if (!property && split) {
    property = catalog.get(split.property);
    element = split.element;
    if (property && property.format !== "classification") {
      throw queryError(
        "query.order",
        "unknownField",
        `${where}: ${quote(split.property)} is a ${property.format} property; element fields such as ${element} apply ` +
          `to classification properties only.`,
      );
    }
  }
  if (!property)
    throw queryError("query.order", "unknownProperty", `${where}: there is no property named ${quote(rest)} (names are case-sensitive).`);
  if (property.isMultiselect) {
    throw queryError(
      "query.order",
      "notOrderable",
      `${where}: ${quote(property.name)} is a multiselect property, which holds several values and cannot be ordered by.`,
    );
  }
  return { kind: "property", property, element, direction: request.direction };
}

function propertyPart(field: string): string | undefined {
  if (field.length <= PREFIX.length || field.slice(0, PREFIX.length).toLowerCase() !== PREFIX) return undefined;
  return field.slice(PREFIX.length);
}

function splitElement(rest: string): { property: string; element: ElementField } | undefined {
  const dot = rest.lastIndexOf(".");
  if (dot <= 0) return undefined;
  const element = ELEMENT_FIELDS[rest.slice(dot + 1).toLowerCase() as keyof typeof ELEMENT_FIELDS] as ElementField | undefined;
  return element ? { property: rest.slice(0, dot), element } : undefined;
}

export interface OrderSql {
  joins: string[];
  /** The ORDER BY list, ending with the id tie-breaker. */
  orderBy: string;
  /** The value expression of each term, in order (without direction and tie-breaker). */
  expressions: string[];
}

/** Compiles resolved terms to LEFT JOINs and an ORDER BY list (nulls last, id tie-breaker). */
export function orderSql(orders: readonly ResolvedOrder[], list: ListDefinition, values: SqlValues): OrderSql {
  const joins: string[] = [];
  const joined = new Map<string, { index: number; elementJoined: boolean }>();
  let budget = MAX_ORDER_JOINS;

  /** Joins what the term needs and returns the aliases, or undefined when the join budget is spent. */
  const aliasesFor = (property: PropertyInfo, needsElement: boolean) => {
    let entry = joined.get(property.name);
    if (!entry) {
      if (budget < (needsElement ? 2 : 1)) return undefined;
      entry = { index: joined.size, elementJoined: false };
      joined.set(property.name, entry);
      joins.push(valueJoin(`po${entry.index}`, list.idExpression, property, list.entityKind, values));
      budget--;
    }
    if (needsElement && !entry.elementJoined) {
      if (budget < 1) return undefined;
      entry.elementJoined = true;
      joins.push(elementJoin(`pc${entry.index}`, `po${entry.index}`, property, values));
      budget--;
    }
    return { value: `po${entry.index}`, element: `pc${entry.index}` };
  };

  const expressions = orders.map((order) => {
    if (order.kind === "field") {
      for (const join of order.joins) if (!joins.includes(join)) joins.push(join);
      return order.column;
    }
    const aliases = aliasesFor(order.property, needsElementJoin(order));
    return aliases
      ? propertyExpression(order.property, order.element, aliases.value, aliases.element)
      : propertySubquery(order.property, order.element, list, values);
  });
  const terms = orders.map((order, i) => `${expressions[i]} ${order.direction.toUpperCase()} NULLS LAST`);
  terms.push(`${list.idExpression} ASC`);
  return { joins, orderBy: terms.join(", "), expressions };
}

/**
 * The column of property_values whose index (entity_kind, name, column, entity_id) lists the
 * entities in the order of this term, or undefined when the term orders by something else (a
 * canonical field, an entity's owner name, a classification element's field).
 */
export function indexedOrderColumn(order: ResolvedOrder): "value_num" | "value_text" | undefined {
  if (order.kind !== "property" || order.element !== "name") return undefined;
  switch (order.property.format) {
    case "boolean":
    case "integer":
    case "decimal":
    case "date":
      return "value_num";
    case "text":
    case "classification":
      return "value_text";
    case "entity":
      return undefined;
  }
}

function needsElementJoin(order: Extract<ResolvedOrder, { kind: "property" }>): boolean {
  return order.property.format === "classification" && order.element !== "name";
}

function valueJoin(alias: string, idExpression: string, property: PropertyInfo, entityKind: string, values: SqlValues): string {
  // Matches the primary key (entity_kind, entity_id, name, position): one row at most.
  return (
    `LEFT JOIN property_values ${alias} ON ${alias}.entity_kind = ${values.value(entityKind)}` +
    ` AND ${alias}.entity_id = ${idExpression} AND ${alias}.name = ${values.value(property.name)} AND ${alias}.position = 0`
  );
}

function elementJoin(alias: string, valueAlias: string, property: PropertyInfo, values: SqlValues): string {
  // Matches the unique index (classification_id, name).
  return (
    `LEFT JOIN classification_elements ${alias} ON ${alias}.classification_id = ` +
    `${values.value(property.classificationId ?? null)} AND ${alias}.name = ${valueAlias}.value_text`
  );
}

function propertySubquery(property: PropertyInfo, element: ElementField, list: ListDefinition, values: SqlValues): string {
  const join = element === "name" ? "" : ` ${elementJoin("pc", "po", property, values)}`;
  return (
    `(SELECT ${propertyExpression(property, element, "po", "pc")} FROM property_values po${join}` +
    ` WHERE po.entity_kind = ${values.value(list.entityKind)} AND po.entity_id = ${list.idExpression}` +
    ` AND po.name = ${values.value(property.name)} AND po.position = 0)`
  );
}

const ELEMENT_COLUMNS: Record<Exclude<ElementField, "name" | "displayName">, string> = {
  code: "code",
  applierCode: "applier_code",
  color: "color",
  order: "sort_order",
  grade: "grade",
};

/**
 * The value a property orders by. Entity references order by the owner's name (value_json holds
 * `{ id, name }`), which is what a reader sees; classification displayName falls back to the
 * element name, as the element is displayed.
 */
function propertyExpression(property: PropertyInfo, element: ElementField, valueAlias: string, elementAlias: string): string {
  switch (property.format) {
    case "boolean":
    case "integer":
    case "decimal":
    case "date":
      return `${valueAlias}.value_num`;
    case "text":
      return `${valueAlias}.value_text`;
    case "entity":
      return `(CASE WHEN json_valid(${valueAlias}.value_json) THEN json_extract(${valueAlias}.value_json, '$.name') END)`;
    case "classification":
      if (element === "name") return `${valueAlias}.value_text`;
      if (element === "displayName") return `coalesce(${elementAlias}.display_name, ${valueAlias}.value_text)`;
      return `${elementAlias}.${ELEMENT_COLUMNS[element]}`;
  }
}
