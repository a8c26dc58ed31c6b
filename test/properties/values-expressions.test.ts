/** Value expressions of linked properties, computed in the QuickJS sandbox (resolved through the dry run). */
import { beforeAll, describe, expect, it } from "vitest";
import { call } from "../support/http";
import { createClassification, entityTypeWith } from "../support/factories/properties";

type Key = "width" | "height" | "area" | "label" | "volume" | "risk" | "seen" | "computedSeen" | "fallback";
const n = {} as Record<Key, string>;
let entityTypeId: string;

beforeAll(async () => {
  const risk = await createClassification([{ name: "Low" }, { name: "High" }]);
  const s = crypto.randomUUID().slice(0, 6);
  for (const key of ["width", "height", "area", "label", "volume", "risk", "seen", "computedSeen", "fallback"] as Key[])
    n[key] = `${key}_${s}`;
  ({ entityTypeId } = await entityTypeWith([
    { name: n.width, format: "decimal", unit: "metre" },
    { name: n.height, format: "decimal", unit: "metre", defaultValue: 2 },
    // Computed from two given properties.
    { name: n.area, format: "decimal", unit: "metre", valueExpression: `return ${n.width} * ${n.height};` },
    // Sees the expression before it (area) and the one after it (volume) as still null.
    { name: n.label, format: "text", valueExpression: `return "area " + ${n.area} + ", volume " + ${n.volume};` },
    { name: n.volume, format: "decimal", unit: "cubicMetre", valueExpression: `return ${n.area} === null ? null : ${n.area} * 3;` },
    {
      name: n.risk,
      format: "classification",
      classification: { id: risk.id },
      valueExpression: `return ${n.width} > 10 ? "High" : "Low";`,
    },
    { name: n.seen, format: "date" },
    { name: n.computedSeen, format: "date", valueExpression: `return ${n.seen} === null ? null : ${n.seen}.slice(0, 10) + "T00:00:00Z";` },
    { name: n.fallback, format: "integer", unit: "second", defaultValue: 7, valueExpression: "return null;" },
  ]));
});

async function dryRun(properties: { name: string; value?: unknown }[], typeId = entityTypeId) {
  const res = await call("/PropertyDefinitions/DryRun", { method: "POST", body: { entityTypeId: typeId, properties } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

const valueOf = (body: { properties: { name: string; value: unknown }[] }, name: string) =>
  body.properties.find((p) => p.name === name)?.value;

describe("value expressions", () => {
  it("computes values from the other properties, in link order", async () => {
    const body = await dryRun([
      { name: n.width, value: 12 },
      { name: n.height, value: 0.5 },
      { name: n.seen, value: "03/15/2024 14:30" },
    ]);
    expect(body.valid).toBe(true);
    expect(valueOf(body, n.area)).toBe(6);
    expect(valueOf(body, n.label)).toBe("area 6, volume null");
    expect(valueOf(body, n.volume)).toBe(18);
    expect(valueOf(body, n.risk)).toBe("High");
    // Expressions see dates in their ISO form; the result is typed like any date.
    expect(valueOf(body, n.computedSeen)).toBe("2024-03-15T00:00:00.000Z");
    expect(valueOf(body, n.fallback)).toBe(7);
  });

  it("uses defaults of the inputs and ignores a value given for a computed property", async () => {
    const body = await dryRun([
      { name: n.width, value: 3 },
      { name: n.area, value: 1000 },
    ]);
    expect(valueOf(body, n.area)).toBe(6);
    expect(valueOf(body, n.risk)).toBe("Low");
  });

  it("does not run expressions while a given value is invalid", async () => {
    const body = await dryRun([{ name: n.width, value: "wide" }]);
    expect(body).toMatchObject({ valid: false, code: "ValidationFailed" });
    expect(body.errors).toEqual([expect.objectContaining({ field: "body.properties.0.value", rule: "type" })]);
  });
});

describe("value expression failures -> ExpressionFailed naming the property", () => {
  it.each([
    ["throws", 'throw new Error("boom"); return 1;', /boom/],
    ["loops forever", "while (true) {} return 1;", /.+/],
    ["reaches no return", "if (false) return 1;", /no value/],
    ["returns the wrong type", 'return "tall";', /not valid/],
    ["returns a non-JSON value", "return () => 1;", /.+/],
    ["uses eval to escape", 'return eval("globalThis.process");', /.+/],
    ["recurses without end", "function f() { return f(); } return f();", /.+/],
    ["allocates without end", "const a = []; for (;;) a.push(new Array(1e6).fill(1)); return 1;", /.+/],
  ])(
    "an expression that %s",
    async (_, expression, message) => {
      const { entityTypeId: typeId, definitions } = await entityTypeWith([
        { format: "integer", unit: "second", valueExpression: expression },
      ]);
      const name = definitions[0]!.name;
      const body = await dryRun([], typeId);
      expect(body).toMatchObject({ valid: false, code: "ExpressionFailed" });
      expect(body.errors).toEqual([
        expect.objectContaining({ field: `body.properties.${name}`, rule: "expression", message: expect.stringMatching(message) }),
      ]);
    },
    30_000,
  );

  it("reports every failing expression and keeps computing the others", async () => {
    const { entityTypeId: typeId, definitions } = await entityTypeWith([
      { format: "integer", unit: "second", valueExpression: "throw 1; return 1;" },
      { format: "integer", unit: "second", valueExpression: "return 5;" },
      { format: "text", valueExpression: "return undefined;" },
    ]);
    const body = await dryRun([], typeId);
    expect(body.errors.map((e: { field: string }) => e.field)).toEqual([
      `body.properties.${definitions[0]!.name}`,
      `body.properties.${definitions[2]!.name}`,
    ]);
  });

  it("a required property whose expression returns null", async () => {
    const { entityTypeId: typeId, definitions } = await entityTypeWith([
      { format: "text", required: true, valueExpression: "return null;" },
    ]);
    const body = await dryRun([], typeId);
    expect(body).toMatchObject({ valid: false, code: "ExpressionFailed" });
    expect(body.errors).toEqual([expect.objectContaining({ field: `body.properties.${definitions[0]!.name}`, rule: "required" })]);
  });
});

describe("saving a valueExpression", () => {
  it.each([
    ["a syntax error", "return (1 + ;", "syntax"],
    ["a body that closes its wrapper", "return 1; }); (function () { return 2;", "syntax"],
  ])("refuses %s (400)", async (_, valueExpression, rule) => {
    const res = await call("/PropertyDefinitions", {
      method: "POST",
      body: { name: `expr_${crypto.randomUUID().slice(0, 8)}`, format: "text", applicationRule: "Deviation", valueExpression },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ field: "body.valueExpression", rule })]);
  });

  it("accepts an expression that only fails without its inputs", async () => {
    const res = await call("/PropertyDefinitions", {
      method: "POST",
      body: {
        name: `expr_${crypto.randomUUID().slice(0, 8)}`,
        format: "text",
        applicationRule: "Deviation",
        valueExpression: "return missingName.toUpperCase();",
      },
    });
    expect(res.status).toBe(201);
  });
});
