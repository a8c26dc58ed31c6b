/** POST /PropertyDefinitions/DryRun: request shape, the expression form, and security. */
import { describe, expect, it } from "vitest";
import { call } from "../support/http";
import { entityTypeWith } from "../support/factories/properties";

const dryRun = (body: unknown, options: { user?: { permissions: string[] }; anonymous?: boolean } = {}) =>
  call("/PropertyDefinitions/DryRun", { method: "POST", body, ...options });

describe("expression form", () => {
  it.each([
    [
      "arithmetic over the sample properties",
      {
        expression: "return a * b;",
        properties: [
          { name: "a", value: 3 },
          { name: "b", value: 4 },
        ],
      },
      12,
    ],
    ["a property without value is null", { expression: "return a === null;", properties: [{ name: "a" }] }, true],
    [
      "names that are not identifiers via properties[...]",
      { expression: 'return properties["wall thickness"] + 1;', properties: [{ name: "wall thickness", value: 1 }] },
      2,
    ],
    ["a result checked against format date", { expression: 'return "03/15/2024 14:30";', format: "date" }, "2024-03-15T14:30:00.000Z"],
    ["an object owner", { expression: 'return { id: "u1", name: "Jane" };', format: "entity" }, { id: "u1", name: "Jane" }],
    ["null is a value", { expression: "return null;", format: "integer" }, null],
  ])("evaluates %s", async (_, body, value) => {
    const res = await dryRun(body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ valid: true, value });
  });

  it.each([
    ["no return", { expression: "1 + 1" }, "ValidationFailed", "body.expression", "missingReturn"],
    ["a thrown error", { expression: "throw new Error('x'); return 1;" }, "ExpressionFailed", "body.expression", "expression"],
    ["an endless loop", { expression: "for (;;) {} return 1;" }, "ExpressionFailed", "body.expression", "expression"],
    ["no return reached", { expression: "if (false) { return 1; }" }, "ExpressionFailed", "body.expression", "expression"],
    ["a result of the wrong format", { expression: "return 1.5;", format: "integer" }, "ExpressionFailed", "body.expression", "type"],
    [
      "a duplicate sample name",
      {
        expression: "return 1;",
        properties: [
          { name: "a", value: 1 },
          { name: "a", value: 2 },
        ],
      },
      "ValidationFailed",
      "body.properties.1.name",
      "duplicate",
    ],
  ])(
    "answers valid false for %s",
    async (_, body, code, field, rule) => {
      const res = await dryRun(body);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ valid: false, code });
      expect(res.body.errors).toEqual([expect.objectContaining({ field, rule })]);
    },
    30_000,
  );
});

describe("request shape", () => {
  it.each([
    ["neither form", { properties: [] }, "body", "oneOf"],
    ["both forms", { entityTypeId: crypto.randomUUID(), expression: "return 1;" }, "body", "oneOf"],
    ["format without expression", { entityTypeId: crypto.randomUUID(), format: "text" }, "body.format", "notAllowed"],
    [
      "applicationRule without entityTypeId",
      { expression: "return 1;", applicationRule: "Deviation" },
      "body.applicationRule",
      "notAllowed",
    ],
    ["an entity type id that is not a UUID", { entityTypeId: "x" }, "body.entityTypeId", "invalid_format"],
    ["an unknown entity type", { entityTypeId: crypto.randomUUID(), properties: [] }, "body.entityTypeId", "exists"],
    ["a property without name", { expression: "return 1;", properties: [{ value: 1 }] }, "body.properties.0.name", "invalid_type"],
    ["an unknown field", { expression: "return 1;", extra: true }, "body", "unrecognized_keys"],
  ])("answers 400 to %s", async (_, body, field, rule) => {
    const res = await dryRun(body);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("ValidationFailed");
    expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field, rule })]));
  });
});

describe("security", () => {
  it("needs a token (401)", async () => {
    expect((await dryRun({ expression: "return 1;" }, { anonymous: true })).status).toBe(401);
  });

  it("needs properties_read (403) and nothing more", async () => {
    expect((await dryRun({ expression: "return 1;" }, { user: { permissions: ["properties_write"] } })).status).toBe(403);
    const { entityTypeId } = await entityTypeWith([{ format: "text" }]);
    const res = await dryRun({ entityTypeId, properties: [] }, { user: { permissions: ["properties_read"] } });
    expect(res.status).toBe(200);
    expect(res.body.valid).toBe(true);
  });
});
