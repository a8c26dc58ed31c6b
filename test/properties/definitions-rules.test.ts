import { beforeAll, describe, expect, it } from "vitest";
import { call } from "../support/http";
import { createClassification, createPropertyDefinition, propertyDefinitionBody } from "../support/factories/properties";

let classificationId: string;

beforeAll(async () => {
  ({ id: classificationId } = await createClassification([{ name: "Minor" }, { name: "Major", children: [{ name: "Critical" }] }]));
});

type Problem = [field: string, rule: string];

/** Every rule of spec 2.1 for a create body: the body overrides and the problems it must produce. */
const cases: [string, () => Record<string, unknown>, Problem[]][] = [
  ["name missing", () => ({ name: undefined }), [["body.name", "invalid_type"]]],
  ["name with a space", () => ({ name: "wall thickness" }), [["body.name", "pattern"]]],
  ["name starting with a digit", () => ({ name: "1st" }), [["body.name", "pattern"]]],
  ["name a reserved word", () => ({ name: "return" }), [["body.name", "reserved"]]],
  ["name too long", () => ({ name: "a".repeat(101) }), [["body.name", "too_big"]]],
  ["format missing", () => ({ format: undefined }), [["body.format", "invalid_value"]]],
  ["format unknown", () => ({ format: "money" }), [["body.format", "invalid_value"]]],
  ["applicationRule missing", () => ({ applicationRule: undefined }), [["body.applicationRule", "invalid_value"]]],
  ["applicationRule unknown", () => ({ applicationRule: "Pipeline" }), [["body.applicationRule", "invalid_value"]]],
  ["regex on an integer", () => ({ format: "integer", unit: "metre", regex: "^\\d+$" }), [["body.regex", "notAllowed"]]],
  ["regexErrorMessage on a boolean", () => ({ format: "boolean", regexErrorMessage: "no" }), [["body.regexErrorMessage", "notAllowed"]]],
  [
    "regex and message on a classification",
    () => ({ format: "classification", classification: { id: classificationId }, regex: "x", regexErrorMessage: "y" }),
    [
      ["body.regex", "notAllowed"],
      ["body.regexErrorMessage", "notAllowed"],
    ],
  ],
  ["regexErrorMessage without regex", () => ({ regexErrorMessage: "Must be a tag" }), [["body.regexErrorMessage", "notAllowed"]]],
  ["regex that does not compile", () => ({ regex: "([a-z]" }), [["body.regex", "syntax"]]],
  ["regex with a backreference", () => ({ regex: "^(a)\\1$" }), [["body.regex", "unsupported"]]],
  ["regex with a lookahead", () => ({ regex: "^(?=.*\\d)\\w+$" }), [["body.regex", "unsupported"]]],
  ["regex with a lookbehind", () => ({ regex: "(?<!x)y" }), [["body.regex", "unsupported"]]],
  ["regex repeating more than 1000 times", () => ({ regex: "^a{1001}$" }), [["body.regex", "tooLarge"]]],
  ["regex longer than 500", () => ({ regex: "a".repeat(501) }), [["body.regex", "too_big"]]],
  ["unit missing on integer", () => ({ format: "integer", unit: undefined }), [["body.unit", "required"]]],
  ["unit missing on decimal", () => ({ format: "decimal", unit: null }), [["body.unit", "required"]]],
  ["unit on text", () => ({ unit: "metre" }), [["body.unit", "notAllowed"]]],
  ["unit on date", () => ({ format: "date", unit: "second" }), [["body.unit", "notAllowed"]]],
  ["unit unknown", () => ({ format: "decimal", unit: "inch" }), [["body.unit", "invalid_value"]]],
  ["classification missing", () => ({ format: "classification" }), [["body.classification", "required"]]],
  [
    "classification does not exist",
    () => ({ format: "classification", classification: { id: crypto.randomUUID() } }),
    [["body.classification.id", "exists"]],
  ],
  [
    "classification id not a UUID",
    () => ({ format: "classification", classification: { id: "nope" } }),
    [["body.classification.id", "invalid_format"]],
  ],
  ["classification on text", () => ({ classification: { id: classificationId } }), [["body.classification", "notAllowed"]]],
  ["entityType missing on entity", () => ({ format: "entity", entityType: undefined }), [["body.entityType", "required"]]],
  ["entityType unknown", () => ({ format: "entity", entityType: "asset" }), [["body.entityType", "invalid_value"]]],
  ["entityType on text", () => ({ entityType: "identity" }), [["body.entityType", "notAllowed"]]],
  ["isMultiselect on text", () => ({ isMultiselect: true }), [["body.isMultiselect", "notAllowed"]]],
  [
    "required with a default value",
    () => ({ required: true, defaultValue: "x" }),
    [
      ["body.required", "exclusive"],
      ["body.defaultValue", "exclusive"],
    ],
  ],
  [
    "text default not matching the regex",
    () => ({ regex: "^[A-Z]{3}$", regexErrorMessage: "Three capitals", defaultValue: "ab" }),
    [["body.defaultValue", "regex"]],
  ],
  ["boolean default as text", () => ({ format: "boolean", defaultValue: "true" }), [["body.defaultValue", "type"]]],
  ["integer default with a fraction", () => ({ format: "integer", defaultValue: 1.5 }), [["body.defaultValue", "type"]]],
  ["integer default beyond the safe range", () => ({ format: "integer", defaultValue: 2 ** 53 }), [["body.defaultValue", "type"]]],
  ["decimal default as text", () => ({ format: "decimal", defaultValue: "1.5" }), [["body.defaultValue", "type"]]],
  ["date default not a date", () => ({ format: "date", defaultValue: "31/31/2024 10:00" }), [["body.defaultValue", "type"]]],
  [
    "classification default not an element",
    () => ({ format: "classification", classification: { id: classificationId }, defaultValue: "Huge" }),
    [["body.defaultValue", "classificationElement"]],
  ],
  ["entity default without an id", () => ({ format: "entity", defaultValue: { name: "Jane" } }), [["body.defaultValue", "type"]]],
  [
    "multiselect default not an array",
    () => ({ format: "entity", isMultiselect: true, defaultValue: { id: "u1", name: "Jane" } }),
    [["body.defaultValue", "type"]],
  ],
  ["valueExpression without return", () => ({ valueExpression: "a + b" }), [["body.valueExpression", "missingReturn"]]],
  [
    "valueExpression over 10 KB",
    () => ({ valueExpression: `return 1; // ${"x".repeat(10 * 1024)}` }),
    [["body.valueExpression", "maxLength"]],
  ],
  ["category does not exist", () => ({ category: { id: crypto.randomUUID() } }), [["body.category.id", "exists"]]],
  ["metadata not an object", () => ({ metadata: [1, 2] }), [["body.metadata", "invalid_type"]]],
  ["an unknown field", () => ({ colour: "red" }), [["body", "unrecognized_keys"]]],
];

describe("POST /PropertyDefinitions rules", () => {
  it.each(cases)("%s -> 400 naming the field", async (_, overrides, problems) => {
    const body = propertyDefinitionBody({ ...overrides() });
    for (const [key, value] of Object.entries(overrides())) if (value === undefined) delete body[key];
    const res = await call("/PropertyDefinitions", { method: "POST", body });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.code).toBe("ValidationFailed");
    const got = (res.body.errors as { field: string; rule: string }[]).map((e) => [e.field, e.rule]);
    expect(got).toEqual(expect.arrayContaining(problems));
    expect(got).toHaveLength(problems.length);
  });

  it("reports every broken rule at once", async () => {
    const res = await call("/PropertyDefinitions", {
      method: "POST",
      body: propertyDefinitionBody({ format: "integer", unit: null, regex: "x", isMultiselect: true, required: true, defaultValue: 3 }),
    });
    expect(res.status).toBe(400);
    expect((res.body.errors as { field: string }[]).map((e) => e.field).sort()).toEqual(
      ["body.defaultValue", "body.isMultiselect", "body.regex", "body.required", "body.unit"].sort(),
    );
  });

  it("shows the regexErrorMessage as the message of a default that does not match", async () => {
    const res = await call("/PropertyDefinitions", {
      method: "POST",
      body: propertyDefinitionBody({ regex: "^[A-Z]{3}$", regexErrorMessage: "Use three capitals", defaultValue: "ab" }),
    });
    expect(res.body.errors[0].message).toBe("Use three capitals");
  });

  it("refuses a second definition with the same name (409)", async () => {
    const first = await createPropertyDefinition();
    const res = await call("/PropertyDefinitions", { method: "POST", body: propertyDefinitionBody({ name: first.name }) });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("Conflict");
    expect(res.body.errors).toEqual([expect.objectContaining({ field: "body.name", rule: "unique" })]);
  });
});

describe("PUT /PropertyDefinitions rules", () => {
  it("refuses a changed name (400, rule immutable)", async () => {
    const created = await createPropertyDefinition();
    const res = await call("/PropertyDefinitions", { method: "PUT", body: { ...created, etag: undefined, name: `${created.name}x` } });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ field: "body.name", rule: "immutable" })]);
  });

  it.each(cases.filter(([label]) => !label.startsWith("name") && label !== "an unknown field"))(
    "%s -> 400 on update too",
    async (_, overrides, problems) => {
      const created = await createPropertyDefinition();
      const body: Record<string, unknown> = { ...propertyDefinitionBody({ ...overrides() }), id: created.id, name: created.name };
      for (const [key, value] of Object.entries(overrides())) if (value === undefined) delete body[key];
      const res = await call("/PropertyDefinitions", { method: "PUT", body });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      const got = (res.body.errors as { field: string; rule: string }[]).map((e) => [e.field, e.rule]);
      expect(got).toEqual(expect.arrayContaining(problems));
    },
  );
});
