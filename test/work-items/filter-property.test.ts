/**
 * Property-based test of GET /WorkItems over HTTP: random work items (WorkItem property values of
 * several formats, due dates around day boundaries, statuses, owners), random property filters,
 * date filters, statuses, searchText, orders and paging, compared with an in-memory evaluator written
 * from the documented semantics (as test/query/property.test.ts does for the engine alone).
 * Each run's work items are written with SQL and every query is limited to them with `ids`.
 */
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { beforeAll, expect, it } from "vitest";
import { call } from "../support/http";
import { seedPropertyDefinition } from "../support/factories/types";

const db = env.DB;
type Format = "integer" | "decimal" | "text" | "date" | "boolean";
interface Prop {
  key: "I" | "D" | "T" | "DT" | "B";
  name: string;
  id: string;
  format: Format;
}
const PROPS: Prop[] = [];
const FORMATS: Record<Prop["key"], Format> = { I: "integer", D: "decimal", T: "text", DT: "date", B: "boolean" };

beforeAll(async () => {
  for (const [key, format] of Object.entries(FORMATS) as [Prop["key"], Format][]) {
    const seeded = await seedPropertyDefinition({
      format,
      applicationRule: "WorkItem",
      name: `fc${key}_${crypto.randomUUID().slice(0, 6)}`,
    });
    PROPS.push({ key, format, ...seeded });
  }
});

type Value = number | string | boolean;
const textArb = fc.string({ unit: fc.constantFrom("a", "A", "b", "'", " "), maxLength: 3 });
const DAY = 86_400_000;
const BASE = Date.UTC(2026, 4, 1);
// Instants around the boundaries of three days, so day filters and inclusive bounds are exercised.
const instantArb = fc.constantFrom(BASE - 1000, BASE, BASE + 1000, BASE + DAY / 2, BASE + DAY - 1, BASE + DAY, BASE + 2 * DAY + 5000);
const VALUE_ARBS: Record<Format, fc.Arbitrary<Value>> = {
  integer: fc.integer({ min: -3, max: 3 }),
  decimal: fc.integer({ min: -8, max: 8 }).map((n) => n / 4),
  text: textArb,
  date: instantArb,
  boolean: fc.boolean(),
};

interface Item {
  id: string;
  displayName: string;
  referenceId: string | null;
  status: "new" | "active";
  due: number | null;
  owner: { id: string; name: string | null };
  props: Partial<Record<Prop["key"], Value>>;
}

const itemArb: fc.Arbitrary<Item> = fc.record({
  id: fc.uuid().map((u) => u.toLowerCase()),
  displayName: textArb.map((t) => `n${t}`),
  referenceId: fc.option(textArb),
  status: fc.constantFrom("new" as const, "active" as const),
  due: fc.option(instantArb),
  owner: fc.constantFrom({ id: "o1", name: "Zed" }, { id: "o2", name: "amy" }, { id: "o3", name: null }),
  props: fc.record(
    Object.fromEntries((Object.keys(FORMATS) as Prop["key"][]).map((k) => [k, VALUE_ARBS[FORMATS[k]]])) as Record<
      Prop["key"],
      fc.Arbitrary<Value>
    >,
    { requiredKeys: [] },
  ),
});

type Op = "eq" | "ne" | "gt" | "ge" | "lt" | "le" | "in";
interface Term {
  key: Prop["key"];
  op: Op;
  values: Value[];
}
type Tree = Term | { kind: "and" | "or"; children: Tree[] };

const termArb: fc.Arbitrary<Term> = fc.constantFrom(...(Object.keys(FORMATS) as Prop["key"][])).chain((key) => {
  const ops: Op[] = FORMATS[key] === "boolean" ? ["eq", "ne", "in"] : ["eq", "ne", "gt", "ge", "lt", "le", "in"];
  return fc
    .record({
      key: fc.constant(key),
      op: fc.constantFrom(...ops),
      isNull: fc.nat(9).map((n) => n < 2),
      values: fc.array(VALUE_ARBS[FORMATS[key]], { minLength: 1, maxLength: 3 }),
    })
    .map(({ isNull, ...t }) =>
      isNull && (t.op === "eq" || t.op === "ne") ? { ...t, values: [] } : { ...t, values: t.op === "in" ? t.values : t.values.slice(0, 1) },
    );
});
const { tree: treeArb } = fc.letrec<{ tree: Tree; group: Tree }>((tie) => ({
  tree: fc.oneof({ depthSize: "small" }, termArb, tie("group")),
  group: fc.record({
    kind: fc.constantFrom("and" as const, "or" as const),
    children: fc.array(tie("tree"), { minLength: 2, maxLength: 3 }),
  }),
}));

const prop = (key: Prop["key"]) => PROPS.find((p) => p.key === key)!;
function literal(format: Format, v: Value): string {
  if (format === "date") return `'${new Date(v as number).toISOString()}'`;
  if (typeof v === "string") return `'${v.replaceAll("'", "''")}'`;
  return String(v);
}
function render(tree: Tree): string {
  if ("key" in tree) {
    const { name, format } = prop(tree.key);
    if (tree.values.length === 0) return `${name} ${tree.op} null`;
    return tree.op === "in"
      ? `${name} in (${tree.values.map((v) => literal(format, v)).join(", ")})`
      : `${name} ${tree.op} ${literal(format, tree.values[0]!)}`;
  }
  return `(${tree.children.map(render).join(` ${tree.kind} `)})`;
}
function matches(tree: Tree, item: Item): boolean {
  if (!("key" in tree))
    return tree.kind === "and" ? tree.children.every((c) => matches(c, item)) : tree.children.some((c) => matches(c, item));
  const value = item.props[tree.key];
  if (tree.values.length === 0) return tree.op === "eq" ? value === undefined : value !== undefined;
  if (value === undefined) return tree.op === "ne";
  const [x, t] = [
    typeof value === "boolean" ? Number(value) : value,
    typeof tree.values[0] === "boolean" ? Number(tree.values[0]) : tree.values[0]!,
  ];
  switch (tree.op) {
    case "eq":
      return x === t;
    case "ne":
      return x !== t;
    case "gt":
      return x > t;
    case "ge":
      return x >= t;
    case "lt":
      return x < t;
    case "le":
      return x <= t;
    case "in":
      return tree.values.map((v) => (typeof v === "boolean" ? Number(v) : v)).includes(x);
  }
}

const ORDER_FIELDS = [
  "displayName",
  "referenceId",
  "status",
  "dueDate",
  "objectOwner.name",
  "properties.I",
  "properties.D",
  "properties.T",
  "properties.DT",
] as const;
type Key = string | number | null;
function orderKey(field: (typeof ORDER_FIELDS)[number], item: Item): Key {
  switch (field) {
    case "displayName":
      return item.displayName;
    case "referenceId":
      return item.referenceId;
    case "status":
      return item.status;
    case "dueDate":
      return item.due;
    case "objectOwner.name":
      return item.owner.name;
    default: {
      const v = item.props[field.slice("properties.".length) as Prop["key"]];
      return v === undefined ? null : (v as string | number);
    }
  }
}
function compare(a: Key, b: Key, desc: boolean): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return (a < b ? -1 : 1) * (desc ? -1 : 1);
}

interface Query {
  filter: Tree | null;
  order: { field: (typeof ORDER_FIELDS)[number]; desc: boolean }[];
  statuses: ("new" | "active")[] | null;
  dueFrom: number | null;
  dueDays: number[] | null;
  searchText: string | null;
  skip: number | null;
  take: number | null;
}
/** The value in `present` of `present + absent` cases, else null. */
const sometimes = <T>(arb: fc.Arbitrary<T>, present: number, absent: number): fc.Arbitrary<T | null> =>
  fc.oneof({ arbitrary: arb, weight: present }, { arbitrary: fc.constant(null), weight: absent });

const queryArb: fc.Arbitrary<Query> = fc.record({
  filter: sometimes(treeArb, 3, 1),
  order: fc.array(fc.record({ field: fc.constantFrom(...ORDER_FIELDS), desc: fc.boolean() }), { maxLength: 3 }),
  statuses: sometimes(fc.subarray(["new", "active"] as ("new" | "active")[], { minLength: 1 }), 1, 4),
  dueFrom: sometimes(instantArb, 1, 4),
  dueDays: sometimes(fc.subarray([-1, 0, 1, 2], { minLength: 1 }), 1, 4),
  searchText: sometimes(fc.string({ unit: fc.constantFrom("a", "A", "'", "n"), maxLength: 2 }), 1, 4),
  skip: sometimes(fc.nat(5), 1, 3),
  take: sometimes(fc.nat(12), 1, 3),
});

const lower = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());
function evaluate(items: Item[], q: Query): string[] {
  const search = q.searchText?.trim();
  const days = q.dueDays?.map((d) => BASE + d * DAY);
  const matched = items.filter(
    (i) =>
      (!q.filter || matches(q.filter, i)) &&
      (!q.statuses || q.statuses.includes(i.status)) &&
      (q.dueFrom === null || (i.due !== null && i.due >= q.dueFrom)) &&
      (!days || (i.due !== null && days.some((d) => i.due! >= d && i.due! < d + DAY))) &&
      (!search || [i.displayName, i.referenceId].some((t) => t !== null && lower(t).includes(lower(search)))),
  );
  const order = q.order.length > 0 ? q.order : [{ field: "displayName" as const, desc: false }];
  matched.sort((a, b) => {
    for (const o of order) {
      const c = compare(orderKey(o.field, a), orderKey(o.field, b), o.desc);
      if (c !== 0) return c;
    }
    return a.id < b.id ? -1 : 1;
  });
  const skip = q.skip ?? 0;
  return matched.slice(skip, skip + (q.take ?? 100)).map((i) => i.id);
}

async function load(items: Item[]) {
  const now = new Date().toISOString();
  const statements = items.flatMap((i) => [
    db
      .prepare(
        `INSERT INTO work_items (id, display_name, reference_id, status, due_date, type_id, owner_id, owner_name, tags,
        metadata, etag, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, '00000000-0000-4000-8000-000000000001', ?6, ?7, '[]', NULL, 'e', ?8, ?8)`,
      )
      .bind(
        i.id,
        i.displayName,
        i.referenceId,
        i.status,
        i.due === null ? null : new Date(i.due).toISOString(),
        i.owner.id,
        i.owner.name,
        now,
      ),
    ...(Object.entries(i.props) as [Prop["key"], Value][]).map(([key, v]) => {
      const p = prop(key);
      const json = p.format === "date" ? JSON.stringify(new Date(v as number).toISOString()) : JSON.stringify(v);
      const text = p.format === "text" ? (v as string) : null;
      const num = p.format === "text" ? null : typeof v === "boolean" ? Number(v) : (v as number);
      return db
        .prepare(
          "INSERT INTO property_values (entity_kind, entity_id, name, position, definition_id, value_text, value_num, " +
            "value_json) VALUES ('workItem', ?1, ?2, 0, ?3, ?4, ?5, ?6)",
        )
        .bind(i.id, p.name, p.id, text, num, json);
    }),
  ]);
  await db.batch(statements);
}

function queryString(q: Query, ids: string[]): string {
  const params = new URLSearchParams({ ids: ids.join(",") });
  if (q.filter) params.set("properties", render(q.filter));
  if (q.order.length > 0)
    params.set(
      "order",
      q.order
        .map(
          (o) =>
            (o.field === "properties.I" || o.field.startsWith("properties.")
              ? `properties.${prop(o.field.slice(11) as Prop["key"]).name}`
              : o.field) + (o.desc ? " desc" : " asc"),
        )
        .join(", "),
    );
  if (q.statuses) params.set("statuses", q.statuses.join(","));
  if (q.dueFrom !== null) params.set("dueDateFrom", new Date(q.dueFrom).toISOString());
  if (q.dueDays) params.set("dueDates", q.dueDays.map((d) => new Date(BASE + d * DAY).toISOString().slice(0, 10)).join(","));
  if (q.searchText !== null) params.set("searchText", q.searchText);
  if (q.skip !== null) params.set("skip", String(q.skip));
  if (q.take !== null) params.set("take", String(q.take));
  return params.toString();
}

const stats = { queries: 0, nonEmpty: 0, filtered: 0 };

it("GET /WorkItems matches an in-memory evaluator on random work items, filters and orders", { timeout: 180_000 }, async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.uniqueArray(itemArb, { selector: (i) => i.id, minLength: 3, maxLength: 25 }),
      fc.array(queryArb, { minLength: 1, maxLength: 4 }),
      async (generated, queries) => {
        // Fresh ids per run: shrinking replays the same generated ids, which are already stored.
        const items = generated.map((i) => ({ ...i, id: crypto.randomUUID() }));
        await load(items);
        for (const q of queries) {
          const qs = queryString(
            q,
            items.map((i) => i.id),
          );
          const res = await call(`/WorkItems?${qs}`);
          expect(res.status, res.text).toBe(200);
          const expected = evaluate(items, q);
          expect({ qs, ids: res.body.map((w: { id: string }) => w.id) }).toEqual({ qs, ids: expected });
          stats.queries += 1;
          if (expected.length > 0) stats.nonEmpty += 1;
          if (q.filter) stats.filtered += 1;
        }
      },
    ),
    { numRuns: 60, interruptAfterTimeLimit: 120_000, markInterruptAsFailure: true },
  );
  // The comparisons must have had rows to compare: most queries match something.
  expect(stats.nonEmpty, JSON.stringify(stats)).toBeGreaterThan(stats.queries / 3);
  expect(stats.filtered).toBeGreaterThan(stats.queries / 2);
});
