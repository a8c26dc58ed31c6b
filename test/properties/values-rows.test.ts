/**
 * The property_values row layout the list query engine relies on. No route writes values yet (the
 * entity domains will), so this drives the exported functions directly against the real D1.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import {
  readPropertyValues,
  replacePropertyValuesStatements,
  resolveLinkedValues,
  toLinkedProperties,
  toPropertyValueRows,
  type PropertyValueRow,
} from "../../src/properties/values";
import { createClassification, entityTypeWith } from "../support/factories/properties";

let entityTypeId: string;
type Key = "tag" | "ok" | "count" | "depth" | "seen" | "risk" | "owner" | "team" | "note";
const n = {} as Record<Key, string>;
const ids = {} as Record<Key, string>;

beforeAll(async () => {
  const risk = await createClassification([{ name: "Low" }, { name: "High", children: [{ name: "Critical" }] }]);
  const suffix = crypto.randomUUID().slice(0, 6);
  const specs: [Key, Record<string, unknown>][] = [
    ["tag", { format: "text" }],
    ["ok", { format: "boolean" }],
    ["count", { format: "integer", unit: "mole" }],
    ["depth", { format: "decimal", unit: "metre" }],
    ["seen", { format: "date" }],
    ["risk", { format: "classification", classification: { id: risk.id } }],
    ["owner", { format: "entity", entityType: "identity" }],
    ["team", { format: "entity", entityType: "identity", isMultiselect: true }],
    ["note", { format: "text" }],
  ];
  const created = await entityTypeWith(specs.map(([key, body]) => ({ ...body, name: (n[key] = `${key}_${suffix}`) })));
  entityTypeId = created.entityTypeId;
  specs.forEach(([key], i) => (ids[key] = created.definitions[i]!.id));
});

async function resolve(values: { name: string; value: unknown }[]) {
  return resolveLinkedValues(env.DB, { entityTypeId, values });
}

describe("property_values rows", () => {
  it("types each column by format, one row per multiselect owner, none for null", async () => {
    const entityId = crypto.randomUUID();
    const resolved = await resolve([
      { name: n.tag, value: "T-1" },
      { name: n.ok, value: true },
      { name: n.count, value: 12 },
      { name: n.depth, value: 2.5 },
      { name: n.seen, value: "03/15/2024 14:30" },
      { name: n.risk, value: "Critical" },
      { name: n.owner, value: { id: "u-1", name: "Jane" } },
      {
        name: n.team,
        value: [
          { id: "u-2", name: "Li" },
          { id: "u-3", name: "Ada" },
        ],
      },
      { name: n.note, value: null },
    ]);
    const rows = toPropertyValueRows("deviation", entityId, resolved);
    const row = (name: string, position = 0): Partial<PropertyValueRow> | undefined =>
      rows.find((r) => r.name === name && r.position === position);
    const common = { entity_kind: "deviation", entity_id: entityId };
    expect(row(n.tag)).toEqual({
      ...common,
      name: n.tag,
      position: 0,
      definition_id: ids.tag,
      value_text: "T-1",
      value_num: null,
      value_json: '"T-1"',
    });
    expect(row(n.ok)).toMatchObject({ value_text: null, value_num: 1, value_json: "true" });
    expect(row(n.count)).toMatchObject({ value_text: null, value_num: 12, value_json: "12" });
    expect(row(n.depth)).toMatchObject({ value_text: null, value_num: 2.5, value_json: "2.5" });
    expect(row(n.seen)).toMatchObject({
      value_text: null,
      value_num: Date.UTC(2024, 2, 15, 14, 30),
      value_json: '"2024-03-15T14:30:00.000Z"',
    });
    expect(row(n.risk)).toMatchObject({ value_text: "Critical", value_num: null, definition_id: ids.risk });
    expect(row(n.owner)).toMatchObject({ value_text: "u-1", value_num: null, value_json: '{"id":"u-1","name":"Jane"}' });
    expect(row(n.team, 0)).toMatchObject({ value_text: "u-2", value_json: '{"id":"u-2","name":"Li"}' });
    expect(row(n.team, 1)).toMatchObject({ value_text: "u-3", value_json: '{"id":"u-3","name":"Ada"}' });
    expect(rows.filter((r) => r.name === n.note)).toEqual([]);
    expect(rows).toHaveLength(9);

    await env.DB.batch(replacePropertyValuesStatements(env.DB, "deviation", entityId, rows));
    const stored = await env.DB.prepare("SELECT * FROM property_values WHERE entity_id = ?1 ORDER BY name, position").bind(entityId).all();
    expect(stored.results).toHaveLength(9);

    const back = await readPropertyValues(env.DB, "deviation", [entityId]);
    const expected = toLinkedProperties(resolved).filter((p) => p.value !== null);
    expect(back.get(entityId)).toEqual([...expected].sort((a, b) => (a.name < b.name ? -1 : 1)));
  });

  it("replaces earlier rows and keeps statements within 100 bound parameters", async () => {
    const entityId = crypto.randomUUID();
    const many = Array.from({ length: 40 }, (_, i) => ({ id: `u-${i}`, name: `User ${i}` }));
    const rows = toPropertyValueRows("workItem", entityId, await resolve([{ name: n.team, value: many }]));
    expect(rows).toHaveLength(40);
    const statements = replacePropertyValuesStatements(env.DB, "workItem", entityId, rows);
    expect(statements).toHaveLength(1 + Math.ceil(40 / 12));
    await env.DB.batch(statements);
    const second = toPropertyValueRows("workItem", entityId, await resolve([{ name: n.tag, value: "only" }]));
    await env.DB.batch(replacePropertyValuesStatements(env.DB, "workItem", entityId, second));
    expect((await readPropertyValues(env.DB, "workItem", [entityId])).get(entityId)).toEqual([{ name: n.tag, value: "only" }]);
  });

  it("reads back many entities at once, in chunks, keeping kinds apart", async () => {
    const entityIds = Array.from({ length: 150 }, () => crypto.randomUUID());
    const statements = [];
    for (const [i, entityId] of entityIds.entries()) {
      const rows = toPropertyValueRows("activity", entityId, await resolve([{ name: n.count, value: i }]));
      statements.push(...replacePropertyValuesStatements(env.DB, "activity", entityId, rows));
    }
    await env.DB.batch(statements);
    const back = await readPropertyValues(env.DB, "activity", [...entityIds, crypto.randomUUID()]);
    expect(back.size).toBe(151);
    entityIds.forEach((entityId, i) => expect(back.get(entityId)).toEqual([{ name: n.count, value: i }]));
    expect((await readPropertyValues(env.DB, "deviation", entityIds)).get(entityIds[0]!)).toEqual([]);
  });
});
