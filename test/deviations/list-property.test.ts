/**
 * Property-based test of GET /Deviations over HTTP: random deviations with random property values
 * (absent, single, multi-valued), random filters, orders, ids, searchText, owner filters and paging,
 * compared with an in-memory evaluator of the documented semantics. Each run's deviations carry
 * their own status, and every request filters on it (statuses), so runs never see each other.
 * Rows are loaded with SQL (thousands of POSTs would take minutes); the requests go through HTTP.
 */
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { beforeAll, expect, it } from "vitest";
import { call } from "../support/http";
import { createClassification, createPropertyDefinition } from "../support/factories/properties";

const db = env.DB;
type Format = "text" | "integer" | "decimal" | "boolean" | "date" | "classification" | "entity";
interface Prop {
  key: string;
  name: string;
  format: Format;
  multi: boolean;
}

const PROPS: Prop[] = [
  { key: "T", name: "", format: "text", multi: false },
  { key: "I", name: "", format: "integer", multi: false },
  { key: "D", name: "", format: "decimal", multi: false },
  { key: "B", name: "", format: "boolean", multi: false },
  { key: "DT", name: "", format: "date", multi: false },
  { key: "C", name: "", format: "classification", multi: false },
  { key: "EM", name: "", format: "entity", multi: true },
];
const ELEMENTS = ["Low", "Medium", "High"];
const OWNERS = ["u1", "u2", "u3"];

type Value = string | number | boolean;

const textArb = fc.string({ unit: fc.constantFrom("a", "A", "b", "'", "é", " ", "%"), maxLength: 3 });
const dateArb = fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2026, 0, 1) }).map((ms) => ms - (ms % 60_000));
const VALUE_ARBS: Record<Format, fc.Arbitrary<Value>> = {
  text: textArb,
  integer: fc.integer({ min: -3, max: 3 }),
  decimal: fc.integer({ min: -8, max: 8 }).map((n) => n / 4),
  boolean: fc.boolean(),
  date: dateArb,
  classification: fc.constantFrom(...ELEMENTS, "Ghost"),
  entity: fc.constantFrom(...OWNERS),
};

interface Deviation {
  id: string;
  ref: string;
  ownerId: string;
  ownerName: string | null;
  createdAt: string;
  props: Partial<Record<string, Value[]>>;
}

const propsArb = fc.record(
  Object.fromEntries(
    PROPS.map((p) => [p.key, p.multi ? fc.uniqueArray(VALUE_ARBS[p.format], { maxLength: 3 }) : VALUE_ARBS[p.format].map((v) => [v])]),
  ),
  { requiredKeys: [] },
) as fc.Arbitrary<Deviation["props"]>;

const deviationsArb = fc
  .uniqueArray(
    fc.record({
      id: fc.uuid({ version: 4 }),
      ref: textArb,
      ownerId: fc.constantFrom(...OWNERS),
      ownerName: fc.option(textArb),
      minute: fc.nat(5),
      props: propsArb,
    }),
    { selector: (d) => d.id, minLength: 3, maxLength: 30 },
  )
  .map((list) =>
    list.map((d, i) => ({
      id: d.id,
      ref: `${d.ref}#${i}`,
      ownerId: d.ownerId,
      ownerName: d.ownerName,
      createdAt: new Date(Date.UTC(2025, 0, 1, 0, d.minute)).toISOString(),
      props: d.props,
    })),
  );

// ---- filters -------------------------------------------------------------------------------------

type Op = "eq" | "ne" | "gt" | "ge" | "lt" | "le" | "in";
interface Term {
  kind: "term";
  prop: Prop;
  op: Op;
  values: Value[];
}
interface Group {
  kind: "and" | "or";
  children: Tree[];
}
type Tree = Term | Group;

const ORDERED: Format[] = ["text", "integer", "decimal", "date"];
const termArb: fc.Arbitrary<Term> = fc.constantFrom(...PROPS).chain((prop) =>
  fc
    .record({
      op: fc.constantFrom<Op>(
        ...(ORDERED.includes(prop.format) ? (["eq", "ne", "gt", "ge", "lt", "le", "in"] as Op[]) : (["eq", "ne", "in"] as Op[])),
      ),
      isNull: fc.nat(9).map((n) => n < 2),
      values: fc.array(VALUE_ARBS[prop.format], { minLength: 1, maxLength: 3 }),
    })
    .map(({ op, isNull, values }) => ({
      kind: "term" as const,
      prop,
      op,
      values: isNull && (op === "eq" || op === "ne") ? [] : op === "in" ? values : values.slice(0, 1),
    })),
);
const { tree: treeArb } = fc.letrec<{ tree: Tree; group: Group }>((tie) => ({
  tree: fc.oneof({ depthSize: "small", withCrossShrink: true }, termArb, tie("group")),
  group: fc.record({
    kind: fc.constantFrom("and" as const, "or" as const),
    children: fc.array(tie("tree"), { minLength: 2, maxLength: 3 }),
  }),
}));

function literal(format: Format, value: Value): string {
  const quoted = (s: string) => `'${s.replaceAll("'", "''")}'`;
  if (format === "date") return quoted(new Date(value as number).toISOString());
  return typeof value === "string" ? quoted(value) : String(value);
}

function render(tree: Tree, parent?: "and" | "or"): string {
  if (tree.kind === "term") {
    if (tree.values.length === 0) return `${tree.prop.name} ${tree.op} null`;
    const values = tree.values.map((v) => literal(tree.prop.format, v));
    return `${tree.prop.name} ${tree.op} ${tree.op === "in" ? `(${values.join(", ")})` : values[0]}`;
  }
  const text = tree.children.map((child) => render(child, tree.kind)).join(` ${tree.kind} `);
  return parent === "and" && tree.kind === "or" ? `(${text})` : text;
}

const stored = (value: Value): string | number => (typeof value === "boolean" ? (value ? 1 : 0) : value);

function matches(tree: Tree, d: Deviation): boolean {
  if (tree.kind !== "term") {
    const results = tree.children.map((child) => matches(child, d));
    return tree.kind === "and" ? results.every(Boolean) : results.some(Boolean);
  }
  const rows = (d.props[tree.prop.key] ?? []).map(stored);
  if (tree.values.length === 0) return tree.op === "eq" ? rows.length === 0 : rows.length > 0;
  const wanted = tree.values.map(stored);
  const target = wanted[0]!;
  const test: Record<Op, (r: string | number) => boolean> = {
    eq: (r) => r === target,
    ne: (r) => r === target,
    gt: (r) => r > target,
    ge: (r) => r >= target,
    lt: (r) => r < target,
    le: (r) => r <= target,
    in: (r) => wanted.includes(r),
  };
  return tree.op === "ne" ? !rows.some(test.ne) : rows.some(test[tree.op]);
}

// ---- orders and the evaluator ----------------------------------------------------------------------

const ORDER_FIELDS = ["referenceId", "objectOwner.name", "createdAt", ...PROPS.filter((p) => !p.multi).map((p) => `properties.${p.key}`)];
type Key = string | number | null;

function orderKey(field: string, d: Deviation): Key {
  if (field === "referenceId") return d.ref;
  if (field === "objectOwner.name") return d.ownerName;
  if (field === "createdAt") return d.createdAt;
  const first = d.props[field.slice("properties.".length)]?.[0];
  return first === undefined ? null : stored(first);
}

function compareKeys(a: Key, b: Key, desc: boolean): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return (a < b ? -1 : 1) * (desc ? -1 : 1);
}

interface Query {
  filter: Tree | null;
  order: { field: string; desc: boolean }[];
  ids: string[] | null;
  excludeIds: string[] | null;
  owners: string[] | null;
  searchText: string | null;
  skip: number | null;
  take: number | null;
}

const asciiLower = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());

function evaluate(list: Deviation[], q: Query): { ids: string[]; total: number } {
  const search = q.searchText?.trim();
  const matched = list.filter(
    (d) =>
      (!q.filter || matches(q.filter, d)) &&
      (!q.ids?.length || q.ids.includes(d.id)) &&
      (!q.excludeIds?.length || !q.excludeIds.includes(d.id)) &&
      (!q.owners?.length || q.owners.includes(d.ownerId)) &&
      (!search || asciiLower(d.ref).includes(asciiLower(search))),
  );
  const order = q.order.length > 0 ? q.order : [{ field: "createdAt", desc: true }];
  const sorted = [...matched].sort((a, b) => {
    for (const term of order) {
      const c = compareKeys(orderKey(term.field, a), orderKey(term.field, b), term.desc);
      if (c !== 0) return c;
    }
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  });
  const skip = q.skip ?? 0;
  return { ids: sorted.slice(skip, skip + (q.take ?? 100)).map((d) => d.id), total: matched.length };
}

const sometimes = <T>(arb: fc.Arbitrary<T>, present: number, absent: number): fc.Arbitrary<T | null> =>
  fc.oneof({ arbitrary: arb, weight: present }, { arbitrary: fc.constant(null), weight: absent });

function queryArb(ids: string[]): fc.Arbitrary<Query> {
  const idList = fc.array(fc.oneof(fc.constantFrom(...ids), fc.uuid({ version: 4 })), { maxLength: 6 });
  return fc.record({
    filter: sometimes(treeArb, 5, 1),
    order: fc.array(fc.record({ field: fc.constantFrom(...ORDER_FIELDS), desc: fc.boolean() }), { maxLength: 3 }),
    ids: sometimes(idList, 1, 4),
    excludeIds: sometimes(idList, 1, 4),
    owners: sometimes(fc.subarray(OWNERS, { minLength: 1 }), 1, 3),
    searchText: sometimes(fc.string({ unit: fc.constantFrom("a", "A", "b", "#", "1"), maxLength: 2 }), 1, 4),
    skip: sometimes(fc.nat(8), 1, 2),
    take: sometimes(fc.nat(30), 1, 2),
  });
}

// ---- loading --------------------------------------------------------------------------------------

function chunkedInserts(table: string, columns: string[], rows: unknown[][]): D1PreparedStatement[] {
  const per = Math.floor(100 / columns.length);
  const statements: D1PreparedStatement[] = [];
  for (let i = 0; i < rows.length; i += per) {
    const chunk = rows.slice(i, i + per);
    statements.push(
      db
        .prepare(
          `INSERT INTO ${table} (${columns.join(", ")}) VALUES ${chunk.map(() => `(${columns.map(() => "?").join(", ")})`).join(", ")}`,
        )
        .bind(...chunk.flat()),
    );
  }
  return statements;
}

const definitionIds = new Map<string, string>();

async function load(status: string, list: Deviation[]) {
  const rows = list.map((d) => [
    d.id,
    `${status}:${d.ref}`,
    status,
    "00000000-0000-4000-8000-000000000001",
    d.ownerId,
    d.ownerName,
    "e",
    d.createdAt,
    d.createdAt,
  ]);
  const values = list.flatMap((d) =>
    PROPS.flatMap((p) =>
      (d.props[p.key] ?? []).map((value, position) => {
        const isText = ["text", "classification", "entity"].includes(p.format);
        const json =
          p.format === "entity" ? { id: value, name: null } : p.format === "date" ? new Date(value as number).toISOString() : value;
        return [
          "deviation",
          d.id,
          p.name,
          position,
          definitionIds.get(p.key),
          isText ? stored(value) : null,
          isText ? null : stored(value),
          JSON.stringify(json),
        ];
      }),
    ),
  );
  await db.batch([
    ...chunkedInserts(
      "deviations",
      ["id", "reference_id", "status", "type_id", "owner_id", "owner_name", "etag", "created_at", "updated_at"],
      rows,
    ),
    ...chunkedInserts(
      "property_values",
      ["entity_kind", "entity_id", "name", "position", "definition_id", "value_text", "value_num", "value_json"],
      values,
    ),
  ]);
}

beforeAll(async () => {
  const classification = await createClassification(ELEMENTS.map((name) => ({ name })));
  for (const prop of PROPS) {
    const extra: Record<string, unknown> = {};
    if (prop.format === "classification") extra.classification = { id: classification.id };
    if (prop.format === "entity") extra.isMultiselect = prop.multi;
    const created = await createPropertyDefinition({
      name: `fc${prop.key}_${crypto.randomUUID().slice(0, 6)}`,
      format: prop.format,
      ...extra,
    });
    prop.name = created.name;
    definitionIds.set(prop.key, created.id);
  }
});

let runs = 0;

it("GET /Deviations matches an in-memory evaluator on random data, filters and orders", { timeout: 240_000 }, async () => {
  await fc.assert(
    fc.asyncProperty(
      deviationsArb.chain((list) => fc.tuple(fc.constant(list), fc.array(queryArb(list.map((d) => d.id)), { minLength: 1, maxLength: 3 }))),
      async ([generated, queries]) => {
        const status = `fc-run-${++runs}`;
        // Fresh ids per run: shrinking repeats generated ids, which earlier runs already stored.
        const fresh = new Map(generated.map((d) => [d.id, crypto.randomUUID()]));
        const rename = (ids: string[] | null) => ids?.map((id) => fresh.get(id) ?? id) ?? null;
        const loaded = generated.map((d) => ({ ...d, id: fresh.get(d.id)! }));
        const list = loaded.map((d) => ({ ...d, ref: `${status}:${d.ref}` }));
        await load(status, loaded);
        for (const generatedQuery of queries) {
          const query = { ...generatedQuery, ids: rename(generatedQuery.ids), excludeIds: rename(generatedQuery.excludeIds) };
          const params = new URLSearchParams({ statuses: status, includeTotal: "true" });
          if (query.filter) params.set("properties", render(query.filter));
          if (query.order.length > 0)
            params.set(
              "order",
              query.order
                .map(
                  (o) =>
                    o.field.replace(/^properties\.(.+)$/, (_, key: string) => `properties.${PROPS.find((p) => p.key === key)!.name}`) +
                    (o.desc ? " desc" : " asc"),
                )
                .join(", "),
            );
          if (query.ids) params.set("ids", query.ids.join(","));
          if (query.excludeIds) params.set("excludeIds", query.excludeIds.join(","));
          if (query.owners) params.set("objectOwnerIds", query.owners.join(","));
          if (query.searchText !== null) params.set("searchText", query.searchText);
          if (query.skip !== null) params.set("skip", String(query.skip));
          if (query.take !== null) params.set("take", String(query.take));
          const res = await call(`/Deviations?${params}`);
          expect(res.status, JSON.stringify(res.body)).toBe(200);
          const expected = evaluate(list, query);
          expect({
            query: params.toString(),
            ids: (res.body as { id: string }[]).map((d) => d.id),
            total: Number(res.headers.get("x-total-count")),
          }).toEqual({
            query: params.toString(),
            ...expected,
          });
        }
      },
    ),
    { numRuns: 60, interruptAfterTimeLimit: 180_000, markInterruptAsFailure: true },
  );
});
