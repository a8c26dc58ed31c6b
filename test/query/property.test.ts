/**
 * Property-based test of the whole engine: random entities with random property values of every
 * format (absent, null, multi-valued), random filters, orders, ids, searchText and paging, run on
 * D1 and compared with a plain in-memory evaluator written here from the documented semantics.
 * Each run loads its own dataset under a fresh entity_kind (and run column), so nothing is deleted.
 *
 * Every query runs in every plan (plan.ts): as the planner chooses, and forced to lists, to driven
 * (a random driver) and to the order walk (a random, often tiny, window, so the walk's second part
 * and ties at the window's bound are exercised); all must give the evaluator's answer. The canonical
 * fields are declared `indexed`, so orders by them walk too, and a random condition with a probe
 * form (a set in the lists plan, a per-entity probe elsewhere) checks that both forms agree. Each
 * query is also read whole by keyset (keyset.ts, as an export reads), in pages of a few rows.
 */
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { beforeAll, expect, it } from "vitest";
import {
  compileListQuery,
  defineList,
  equals,
  parseFilter,
  runListQuery,
  withProbe,
  type PlanOptions,
  type PropertyFormat,
  type PropertyInfo,
  type SqlScalar,
} from "../../src/pkg/query";

const db = env.DB;
const CLASSIFICATION = crypto.randomUUID();

// ---- the catalog and the value domains ------------------------------------------------------

const PROPS: PropertyInfo[] = [
  { name: "T", format: "text", isMultiselect: false },
  { name: "TM", format: "text", isMultiselect: true },
  { name: "I", format: "integer", isMultiselect: false },
  { name: "IM", format: "integer", isMultiselect: true },
  { name: "Dec.v-2", format: "decimal", isMultiselect: false },
  { name: "B", format: "boolean", isMultiselect: false },
  { name: "DT", format: "date", isMultiselect: false },
  { name: "C", format: "classification", classificationId: CLASSIFICATION, isMultiselect: false },
  { name: "CM", format: "classification", classificationId: CLASSIFICATION, isMultiselect: true },
  { name: "E", format: "entity", isMultiselect: false },
  { name: "EM", format: "entity", isMultiselect: true },
];
const catalog = async (names: string[]) => new Map(PROPS.filter((p) => names.includes(p.name)).map((p) => [p.name, p]));

type Element = { name: string } & Record<"displayName" | "code" | "applierCode" | "color", string | null> &
  Record<"order" | "grade", number | null>;
const ELEMENTS: Element[] = [
  { name: "Low", displayName: "niedrig", code: "L", applierCode: null, color: "green", order: 1, grade: 0.5 },
  { name: "Medium", displayName: null, code: "M", applierCode: "am", color: null, order: 2, grade: null },
  { name: "High", displayName: "Hoch", code: null, applierCode: "ah", color: "red", order: null, grade: 2.25 },
  { name: "O'Neil", displayName: "O'Neil", code: "L", applierCode: "ao", color: "green", order: 1, grade: -1 },
];
// "Ghost" is a value without an element row: its element fields are null.
const ELEMENT_NAMES = [...ELEMENTS.map((e) => e.name), "Ghost"];
// u4's value has no name: it orders as null.
const OWNERS = [{ id: "u1", name: "Zoe" }, { id: "u2", name: "adam" }, { id: "u3", name: "Émile" }, { id: "u4" }] as const;

type Owner = (typeof OWNERS)[number];
/** A property value as the client writes it: text/element name, number, boolean, epoch ms (date) or owner. */
type Value = string | number | boolean | Owner;

const textArb = fc.string({ unit: fc.constantFrom("a", "A", "b", "'", "é", " ", "%", "_"), maxLength: 3 });
const decimalArb = fc.oneof(
  fc.integer({ min: -8, max: 8 }).map((n) => n / 4),
  // Ordinary magnitudes: numbers travel as JSON text, which SQLite parses correctly rounded in this range.
  fc.double({ min: -1e6, max: 1e6, noNaN: true }).filter((x) => x === 0 || Math.abs(x) >= 1e-6),
);
const dateArb = fc.oneof(
  // Values two hours apart, so a date literal read in the wrong zone lands on a neighbour.
  fc.constantFrom(
    ...[12, 14, 16].map((h) => Date.UTC(2024, 2, 15, h, 30)),
    Date.UTC(2024, 2, 15),
    Date.UTC(1999, 11, 31, 23, 59, 59),
    Date.UTC(2024, 1, 29, 0, 0, 0, 250),
  ),
  fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2030, 0, 1) }).map((ms) => ms - (ms % 1000)),
);

const VALUE_ARBS: Record<PropertyFormat, fc.Arbitrary<Value>> = {
  text: textArb,
  integer: fc.oneof(fc.integer({ min: -3, max: 3 }), fc.integer({ min: -1_000_000, max: 1_000_000 })),
  decimal: decimalArb,
  boolean: fc.boolean(),
  date: dateArb,
  classification: fc.constantFrom(...ELEMENT_NAMES),
  entity: fc.constantFrom(...OWNERS),
};
const valueArb = (format: PropertyFormat) => VALUE_ARBS[format];

// ---- entities -----------------------------------------------------------------------------------

interface Entity {
  id: string;
  ref: string | null;
  ownerName: string | null;
  score: number | null;
  /** Rows per property name, in position order; null is a row holding null. Absent name: no rows. */
  props: Partial<Record<string, (Value | null)[]>>;
}

const propsArb: fc.Arbitrary<Entity["props"]> = fc.record(
  Object.fromEntries(
    PROPS.map((p) => {
      const one = fc.option(valueArb(p.format), { freq: 6 });
      const rows = p.isMultiselect ? fc.array(one, { maxLength: 3 }) : one.map((v) => [v]);
      return [p.name, rows];
    }),
  ),
  { requiredKeys: [] },
);

const entitiesArb: fc.Arbitrary<Entity[]> = fc.uniqueArray(
  fc.record({ id: fc.uuid(), ref: fc.option(textArb), ownerName: fc.option(textArb), score: fc.option(decimalArb), props: propsArb }),
  { selector: (e) => e.id, minLength: 5, maxLength: 60, size: "max" },
);

// ---- filters --------------------------------------------------------------------------------------

type Op = "eq" | "ne" | "gt" | "ge" | "lt" | "le" | "in";
interface Term {
  kind: "term";
  property: PropertyInfo;
  op: Op;
  /** Empty for `eq null` / `ne null`. */
  values: Value[];
  style: number;
}
interface Group {
  kind: "and" | "or";
  children: Tree[];
  paren: boolean;
  upper: boolean;
}
type Tree = Term | Group;

const ORDERED_FORMATS: PropertyFormat[] = ["text", "integer", "decimal", "date"];

const termArb: fc.Arbitrary<Term> = fc.constantFrom(...PROPS).chain((property) => {
  const ops: Op[] = ORDERED_FORMATS.includes(property.format) ? ["eq", "ne", "gt", "ge", "lt", "le", "in"] : ["eq", "ne", "in"];
  return fc
    .record({
      kind: fc.constant("term" as const),
      property: fc.constant(property),
      op: fc.constantFrom(...ops),
      isNull: fc.nat(9).map((n) => n < 2),
      values: fc.array(valueArb(property.format), { minLength: 1, maxLength: 5 }),
      style: fc.nat(5),
    })
    .map(({ isNull, ...term }) => {
      if (isNull && (term.op === "eq" || term.op === "ne")) return { ...term, values: [] };
      return { ...term, values: term.op === "in" ? term.values : term.values.slice(0, 1) };
    });
});

const { tree: treeArb } = fc.letrec<{ tree: Tree; group: Group }>((tie) => ({
  tree: fc.oneof({ depthSize: "small", withCrossShrink: true }, termArb, tie("group")),
  group: fc.record({
    kind: fc.constantFrom("and" as const, "or" as const),
    children: fc.array(tie("tree"), { minLength: 2, maxLength: 4 }),
    paren: fc.boolean(),
    upper: fc.boolean(),
  }),
}));

const pad = (n: number) => String(n).padStart(2, "0");

function dateLiteral(ms: number, style: number): string {
  const d = new Date(ms);
  const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  const wholeSecond = ms % 1000 === 0;
  if (style === 1) return d.toISOString().slice(0, -1);
  if (style === 2 && wholeSecond) return `${pad(d.getUTCMonth() + 1)}/${pad(d.getUTCDate())}/${d.getUTCFullYear()} ${time}`;
  if (style === 3 && wholeSecond) return `${d.getUTCFullYear()}/${pad(d.getUTCMonth() + 1)}/${pad(d.getUTCDate())} ${time}`;
  if (style === 4) return `${new Date(ms + 2 * 3_600_000).toISOString().slice(0, -1)}+02:00`;
  if (style === 5 && ms % 86_400_000 === 0) return d.toISOString().slice(0, 10);
  return d.toISOString();
}

function literal(format: PropertyFormat, value: Value, style: number): string {
  const quoted = (s: string) => `'${s.replaceAll("'", "''")}'`;
  if (typeof value === "object") return quoted(value.id);
  if (typeof value === "boolean") return style % 2 ? String(value).toUpperCase() : String(value);
  if (format === "date") return quoted(dateLiteral(value as number, style));
  return typeof value === "string" ? quoted(value) : String(value);
}

function render(tree: Tree, parent?: "and" | "or"): string {
  if (tree.kind === "term") {
    const op = tree.style % 3 === 0 ? tree.op.toUpperCase() : tree.op;
    if (tree.values.length === 0) return `${tree.property.name} ${op} ${tree.style % 2 ? "NULL" : "null"}`;
    const values = tree.values.map((v) => literal(tree.property.format, v, tree.style));
    return `${tree.property.name} ${op} ${tree.op === "in" ? `(${values.join(tree.style % 2 ? "," : " , ")})` : values[0]}`;
  }
  const keyword = tree.upper ? tree.kind.toUpperCase() : tree.kind;
  const text = tree.children.map((child) => render(child, tree.kind)).join(` ${keyword} `);
  // Parentheses are needed only for an `or` inside an `and`; elsewhere they are the generator's whim.
  return tree.paren || (parent === "and" && tree.kind === "or") ? `(${text})` : text;
}

function countTerms(tree: Tree): number {
  return tree.kind === "term" ? 1 : tree.children.reduce((n, c) => n + countTerms(c), 0);
}

// ---- the in-memory evaluator ----------------------------------------------------------------------

/** What property_values stores in its typed column for a value. */
function stored(value: Value): string | number {
  if (typeof value === "object") return value.id;
  if (typeof value === "boolean") return value ? 1 : 0;
  return value;
}

function matches(tree: Tree, entity: Entity): boolean {
  if (tree.kind !== "term") {
    const results = tree.children.map((child) => matches(child, entity));
    return tree.kind === "and" ? results.every(Boolean) : results.some(Boolean);
  }
  const rows = (entity.props[tree.property.name] ?? []).filter((v): v is Value => v !== null).map(stored);
  if (tree.values.length === 0) return tree.op === "eq" ? rows.length === 0 : rows.length > 0;
  const wanted = tree.values.map(stored);
  const target = wanted[0] as string | number;
  const test: Record<Op, (r: string | number) => boolean> = {
    eq: (r) => r === target,
    ne: (r) => r === target,
    gt: (r) => r > target,
    ge: (r) => r >= target,
    lt: (r) => r < target,
    le: (r) => r <= target,
    in: (r) => wanted.includes(r),
  };
  // `ne X`: no value equals X; every other operator: some value matches.
  return tree.op === "ne" ? !rows.some(test.ne) : rows.some(test[tree.op]);
}

const ORDER_FIELDS = [
  "referenceId",
  "objectOwner.name",
  "score",
  ...PROPS.filter((p) => !p.isMultiselect).map((p) => `properties.${p.name}`),
  ...["name", "displayName", "code", "applierCode", "color", "order", "grade"].map((f) => `properties.C.${f}`),
];

type Key = string | number | null;

function orderKey(field: string, entity: Entity): Key {
  if (field === "referenceId") return entity.ref;
  if (field === "objectOwner.name") return entity.ownerName;
  if (field === "score") return entity.score;
  const rest = field.slice("properties.".length);
  const [name, element] = rest.startsWith("C.") ? ["C", rest.slice(2)] : [rest, undefined];
  const property = PROPS.find((p) => p.name === name)!;
  const first = entity.props[property.name]?.[0] ?? null;
  if (first === null) return null;
  if (typeof first === "object") return "name" in first ? first.name : null;
  if (!element || element === "name") return stored(first);
  const el = ELEMENTS.find((e) => e.name === first);
  if (element === "displayName") return el?.displayName ?? (first as string);
  return el?.[element as "code" | "applierCode" | "color" | "order" | "grade"] ?? null;
}

function compareKeys(a: Key, b: Key, desc: boolean): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  const ascending = a < b ? -1 : a > b ? 1 : 0;
  return desc ? -ascending : ascending;
}

interface Query {
  filter: Tree | null;
  order: { field: string; direction: "asc" | "desc" | "ASC" | "Desc" | undefined }[];
  ids: string[] | null;
  excludeIds: string[] | null;
  searchText: string | null;
  skip: number | null;
  take: number | null;
  /** Which top-level `and` operand drives when the driven plan is forced (modulo their number), or the ids. */
  driver: number | "ids";
  /** The window when the walk is forced. */
  window: number;
  /** Only entities with a positive score: a list condition with a probe form (see Condition). */
  positive: boolean;
}

const asciiLower = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());

function evaluate(entities: Entity[], query: Query): { ids: string[]; total: number } {
  const search = query.searchText?.trim();
  const matched = entities.filter(
    (e) =>
      (!query.filter || matches(query.filter, e)) &&
      // An empty id list is no restriction, like an absent one.
      (!query.ids?.length || query.ids.map((i) => i.toLowerCase()).includes(e.id)) &&
      (!query.excludeIds?.length || !query.excludeIds.map((i) => i.toLowerCase()).includes(e.id)) &&
      (!search || [e.ref, e.ownerName].some((col) => col !== null && asciiLower(col).includes(asciiLower(search)))) &&
      (!query.positive || (e.score !== null && e.score > 0)),
  );
  const order = query.order.length > 0 ? query.order : [{ field: "referenceId", direction: "asc" as const }];
  const sorted = [...matched].sort((a, b) => {
    for (const term of order) {
      const c = compareKeys(orderKey(term.field, a), orderKey(term.field, b), term.direction?.toLowerCase() === "desc");
      if (c !== 0) return c;
    }
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  });
  const skip = query.skip ?? 0;
  return { ids: sorted.slice(skip, skip + (query.take ?? 100)).map((e) => e.id), total: matched.length };
}

// ---- loading a run into D1 ------------------------------------------------------------------------

function chunkedInserts(table: string, columns: string[], rows: unknown[][]): D1PreparedStatement[] {
  const perStatement = Math.floor(100 / columns.length);
  const statements: D1PreparedStatement[] = [];
  for (let i = 0; i < rows.length; i += perStatement) {
    const chunk = rows.slice(i, i + perStatement);
    const placeholders = chunk.map(() => `(${columns.map(() => "?").join(", ")})`).join(", ");
    statements.push(db.prepare(`INSERT INTO ${table} (${columns.join(", ")}) VALUES ${placeholders}`).bind(...chunk.flat()));
  }
  return statements;
}

async function load(run: string, kind: string, entities: Entity[]) {
  const things = entities.map((e) => [run, e.id, e.ref, e.ownerName, e.score]);
  const values = entities.flatMap((e) =>
    PROPS.flatMap((p) =>
      (e.props[p.name] ?? []).map((value, position) => {
        const typed = value === null ? null : stored(value);
        const isText = p.format === "text" || p.format === "classification" || p.format === "entity";
        return [kind, e.id, p.name, position, `def-${p.name}`, isText ? typed : null, isText ? null : typed, JSON.stringify(value)];
      }),
    ),
  );
  const statements = [
    ...chunkedInserts("pb_things", ["run", "id", "reference_id", "owner_name", "score"], things),
    ...chunkedInserts(
      "property_values",
      ["entity_kind", "entity_id", "name", "position", "definition_id", "value_text", "value_num", "value_json"],
      values,
    ),
  ];
  if (statements.length > 0) await db.batch(statements);
}

beforeAll(async () => {
  await db.exec(
    "CREATE TABLE pb_things (run TEXT NOT NULL, id TEXT NOT NULL, reference_id TEXT, owner_name TEXT, score REAL, PRIMARY KEY (run, id))",
  );
  const now = new Date().toISOString();
  await db.batch([
    db
      .prepare("INSERT INTO classifications (id, name, format, etag, created_at, updated_at) VALUES (?, 'PB', 'valueHierarchy', 'e', ?, ?)")
      .bind(CLASSIFICATION, now, now),
    ...chunkedInserts(
      "classification_elements",
      ["id", "classification_id", "position", "name", "display_name", "code", "applier_code", "color", "sort_order", "grade"],
      ELEMENTS.map((e, i) => [
        crypto.randomUUID(),
        CLASSIFICATION,
        i,
        e.name,
        e.displayName,
        e.code,
        e.applierCode,
        e.color,
        e.order,
        e.grade,
      ]),
    ),
  ]);
});

// ---- the property ---------------------------------------------------------------------------------

/** The value in `present` of `present + absent` cases, else null. */
function sometimes<T>(arb: fc.Arbitrary<T>, present: number, absent: number): fc.Arbitrary<T | null> {
  return fc.oneof({ arbitrary: arb, weight: present }, { arbitrary: fc.constant(null), weight: absent });
}

function queryArb(ids: string[]): fc.Arbitrary<Query> {
  const idList = fc.array(fc.oneof(ids.length > 0 ? fc.constantFrom(...ids) : fc.uuid(), fc.uuid()), { maxLength: 8 });
  return fc.record({
    filter: sometimes(
      treeArb.filter((t) => countTerms(t) <= 100),
      5,
      1,
    ),
    order: fc.array(
      fc.record({
        field: fc.constantFrom(...ORDER_FIELDS),
        direction: fc.constantFrom("asc" as const, "desc" as const, "ASC" as const, "Desc" as const, undefined),
      }),
      { maxLength: 3 },
    ),
    ids: sometimes(
      idList.map((list) => list.map((id, i) => (i % 2 ? id.toUpperCase() : id))),
      1,
      4,
    ),
    excludeIds: sometimes(idList, 1, 4),
    searchText: sometimes(fc.string({ unit: fc.constantFrom("a", "A", "b", "'", "%", "_", " "), maxLength: 2 }), 1, 4),
    skip: sometimes(fc.nat(10), 1, 2),
    take: sometimes(fc.nat(70), 1, 2),
    driver: fc.oneof(fc.nat(7), fc.constant("ids" as const)),
    window: fc.oneof(fc.integer({ min: 1, max: 8 }), fc.constant(2000)),
    positive: fc.boolean(),
  });
}

/** The forced plans of a query; the driver is taken modulo the number of top-level `and` operands. */
function forcedPlans(query: Query, properties: string | undefined): [string, PlanOptions][] {
  const filter = parseFilter(properties);
  const operands = filter?.kind === "and" ? filter.children.length : 1;
  const driver = query.driver === "ids" && query.ids?.length ? "ids" : typeof query.driver === "number" ? query.driver % operands : 0;
  return [
    ["lists", { plan: "lists" }],
    ["driven", { plan: "driven", driver }],
    ["walk", { plan: "walk", walkWindow: query.window }],
  ];
}

const plansRun = new Map<string, number>();

let runs = 0;

it("matches an in-memory evaluator on random data, filters and orders", { timeout: 240_000 }, async () => {
  await fc.assert(
    fc.asyncProperty(
      entitiesArb.chain((entities) =>
        fc.tuple(fc.constant(entities), fc.array(queryArb(entities.map((e) => e.id)), { minLength: 1, maxLength: 4 })),
      ),
      async ([entities, queries]) => {
        const run = `run${++runs}`;
        const kind = `pb-${run}`;
        await load(run, kind, entities);
        const list = defineList({
          table: "pb_things",
          alias: "e",
          entityKind: kind,
          idColumn: "id",
          // `indexed` lets the forced walk (and the planner, with a filter) walk these canonical
          // fields too (there is no index on them here: the rows must be the same, not the cost).
          fields: {
            referenceId: { column: "e.reference_id", indexed: true },
            "objectOwner.name": { column: "e.owner_name", indexed: true },
            score: { column: "e.score", type: "number", indexed: true },
          },
          searchColumns: ["e.reference_id", "e.owner_name"],
          defaultOrder: "referenceId asc",
        });
        for (const query of queries) {
          const input = {
            properties: query.filter ? render(query.filter) : undefined,
            order: query.order.map((o) => (o.direction ? `${o.field} ${o.direction}` : o.field)).join(", "),
            ids: query.ids?.join(","),
            excludeIds: query.excludeIds?.join(","),
            searchText: query.searchText ?? undefined,
            skip: query.skip ?? undefined,
            take: query.take ?? undefined,
            includeTotal: true,
          };
          const expected = evaluate(entities, query);
          // As a set (the lists plan) or probed per entity (walks, driven): the same entities.
          const positive = withProbe(
            (v) => `e.id IN (SELECT id FROM pb_things WHERE run = ${v.value(run)} AND score > 0)`,
            (v) => `EXISTS (SELECT 1 FROM pb_things px WHERE px.run = ${v.value(run)} AND px.id = e.id AND px.score > 0)`,
          );
          const conditions = [equals("e.run", run), ...(query.positive ? [positive] : [])];
          const compiled = await compileListQuery(list, input, catalog, conditions);
          const { items, total, plan } = await runListQuery<{ id: string }>(db, compiled);
          expect({ input, plan, ids: items.map((row) => row.id), total }).toEqual({ input, plan, ...expected });
          count(`auto ${plan}`);
          for (const [name, options] of forcedPlans(query, input.properties)) {
            const forced = await compileListQuery(list, { ...input, includeTotal: false }, catalog, conditions, options);
            const result = await runListQuery<{ id: string }>(db, forced);
            expect({ input, options, ids: result.items.map((row) => row.id), total: result.total }).toEqual({
              input,
              options,
              ids: expected.ids,
              total: undefined,
            });
            if (result.plan === options.plan) count(`forced ${name}`);
            if (result.plan === "walk" && !/^properties\./i.test(input.order.split(",")[0]?.trim() ?? "")) count("forced field walk");
          }
          // Read whole by keyset, as an export reads (in pages of 1 to 7 rows here; odd sizes in the
          // one-part page, even in the three parts): every match once, in the evaluator's order, and
          // no key column among an item's fields.
          const whole = evaluate(entities, { ...query, skip: null, take: entities.length }).ids;
          const pageSize = ((query.take ?? 0) % 7) + 1;
          const split = { splitKeyset: pageSize % 2 === 0 };
          const read: string[] = [];
          for (let after: SqlScalar[] | undefined, pages = 0; pages <= whole.length; pages++) {
            const keyset = { ...input, skip: undefined, take: pageSize, includeTotal: false, keyset: { after } };
            const page = await runListQuery<{ id: string }>(db, await compileListQuery(list, keyset, catalog, conditions, split));
            read.push(...page.items.map((row) => row.id));
            expect(page.items.flatMap((row) => Object.keys(row).filter((key) => key.startsWith("__key")))).toEqual([]);
            if (!page.next) break;
            after = page.next;
          }
          expect({ input, split, pageSize, ids: read }).toEqual({ input, split, pageSize, ids: whole });
          count("keyset");
        }
      },
    ),
    // Shrinking reloads a dataset per step; the time limit keeps a failure's report inside the test timeout.
    { numRuns: 100, interruptAfterTimeLimit: 150_000, markInterruptAsFailure: true },
  );
  // The forced plans must really have run (a forced plan the request cannot use falls back to lists).
  for (const plan of ["forced lists", "forced driven", "forced walk", "forced field walk", "keyset"])
    expect(plansRun.get(plan) ?? 0, plan).toBeGreaterThan(20);
});

function count(key: string) {
  plansRun.set(key, (plansRun.get(key) ?? 0) + 1);
}
