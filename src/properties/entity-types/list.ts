/** GET /EntityTypes: ids, excludeIds, searchText (name, description), appliesTo, order and paging. */
import type { Database } from "../../db/statements";
import { z } from "@hono/zod-openapi";
import { ApiError } from "../../pkg/errors";
import {
  compileListQuery,
  defineList,
  inList,
  listQueryShape,
  runListQuery,
  splitCsv,
  type Condition,
  noProperties,
} from "../../pkg/query";
import { APPLICATION_RULES, normaliseApplicationRule } from "../definitions/rules";
import type { EntityType } from "./schema";
import { ENTITY_TYPE_COLUMNS, loadLinksOf, toEntityType, type EntityTypeRow } from "./store";

const entityTypeList = defineList({
  table: "entity_types",
  alias: "t",
  entityKind: "entityType",
  idColumn: "id",
  fields: {
    name: { column: "lower(t.name)" },
    appliesTo: { column: "t.applies_to" },
    isDefault: { column: "t.is_default", type: "boolean" },
    createdAt: { column: "t.created_at", type: "datetime" },
    updatedAt: { column: "t.updated_at", type: "datetime" },
  },
  searchColumns: ["t.name", "t.description"],
  defaultOrder: "isDefault desc, name asc",
  select: ENTITY_TYPE_COLUMNS.split(", ")
    .map((column) => `t.${column}`)
    .join(", "),
});

const { ids, excludeIds, searchText, order, skip, take, includeTotal } = listQueryShape;
export const EntityTypeListQuery = z.object({
  ids,
  excludeIds,
  searchText,
  appliesTo: z
    .string()
    .optional()
    .openapi({
      description:
        "Only types with these application rules (comma-separated; deviatioType is read as deviationType). `any` " +
        "matches the types that accept every rule (General).",
      example: "deviationType",
    }),
  order: order.openapi({
    description:
      "Comma-separated `{field} [asc|desc]` over name, appliesTo, isDefault, createdAt, updatedAt. Default: isDefault desc, name asc.",
    example: "name asc",
  }),
  skip,
  take,
  includeTotal,
});

function appliesToCondition(raw: string | undefined): Condition | undefined {
  const items = splitCsv(raw);
  if (items.length === 0) return undefined;
  const rules = items
    .filter((item) => item !== "any")
    .map((item) => {
      const rule = normaliseApplicationRule(item);
      if (!rule) {
        const message = `'${item}' is not an application rule; allowed: ${APPLICATION_RULES.join(", ")}, any.`;
        throw new ApiError("InvalidQuery", message, { errors: [{ field: "query.appliesTo", rule: "invalid_value", message }] });
      }
      return rule;
    });
  const matchRules = rules.length > 0 ? inList("t.applies_to", rules) : undefined;
  if (!items.includes("any")) return matchRules;
  return (values) => (matchRules ? `(t.applies_to IS NULL OR ${matchRules(values)})` : "t.applies_to IS NULL");
}

export async function listEntityTypes(
  db: Database,
  query: z.infer<typeof EntityTypeListQuery>,
): Promise<{ items: EntityType[]; total: number | undefined }> {
  const condition = appliesToCondition(query.appliesTo);
  const compiled = await compileListQuery(entityTypeList, query, noProperties, condition ? [condition] : []);
  const { items, total } = await runListQuery<EntityTypeRow>(db, compiled);
  const links = await loadLinksOf(
    db,
    items.map((row) => row.id),
  );
  return { items: await Promise.all(items.map(async (row) => (await toEntityType(row, links.get(row.id) ?? [])).value)), total };
}
