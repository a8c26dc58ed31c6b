/** Linked property values (spec 2.1 value rules), resolved over HTTP through the dry run. */
import { beforeAll, describe, expect, it } from "vitest";
import { call } from "../support/http";
import {
  createClassification,
  createEntityType,
  createPropertyDefinition,
  entityTypeWith,
  linkToEntityType,
} from "../support/factories/properties";

let entityTypeId: string;
type Key = "tag" | "inspected" | "count" | "depth" | "seen" | "risk" | "owner" | "team" | "note";
const n = {} as Record<Key, string>;

beforeAll(async () => {
  const risk = await createClassification([
    { name: "Low" },
    { name: "High", children: [{ name: "Critical", children: [{ name: "Shutdown" }] }] },
  ]);
  const suffix = crypto.randomUUID().slice(0, 6);
  const specs: [Key, Record<string, unknown>][] = [
    ["tag", { format: "text", regex: "^[A-Z]{2}-\\d+$", regexErrorMessage: "Use two capitals, a dash and digits (AA-123)." }],
    ["inspected", { format: "boolean", required: true }],
    ["count", { format: "integer", unit: "mole", defaultValue: 3 }],
    ["depth", { format: "decimal", unit: "centimetre" }],
    ["seen", { format: "date" }],
    ["risk", { format: "classification", classification: { id: risk.id } }],
    ["owner", { format: "entity", entityType: "identity" }],
    ["team", { format: "entity", entityType: "identity", isMultiselect: true }],
    ["note", { format: "text" }],
  ];
  const { entityTypeId: id } = await entityTypeWith(specs.map(([key, body]) => ({ ...body, name: (n[key] = `${key}_${suffix}`) })));
  entityTypeId = id;
});

/** The values for the required property, so other cases can leave it out. */
const base = () => [{ name: n.inspected, value: true }];

async function dryRun(properties: { name: string; value?: unknown }[], extra: Record<string, unknown> = {}) {
  const res = await call("/PropertyDefinitions/DryRun", { method: "POST", body: { entityTypeId, properties, ...extra } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

const valueOf = (body: { properties: { name: string; value: unknown }[] }, name: string) =>
  body.properties.find((p) => p.name === name)?.value;

describe("linked values: happy paths", () => {
  it("types every format and returns every linked property in link order", async () => {
    const body = await dryRun([
      { name: n.tag, value: "AB-12" },
      { name: n.inspected, value: false },
      { name: n.count, value: -7 },
      { name: n.depth, value: 0.25 },
      { name: n.seen, value: "03/15/2024 14:30" },
      { name: n.risk, value: "Shutdown" },
      { name: n.owner, value: { id: "u-1", name: "Jane Doe", email: "dropped" } },
      {
        name: n.team,
        value: [
          { id: "u-1", name: "Jane" },
          { id: "u-2", name: "Li" },
        ],
      },
    ]);
    expect(body).toEqual({
      valid: true,
      properties: [
        { name: n.tag, value: "AB-12" },
        { name: n.inspected, value: false },
        { name: n.count, value: -7 },
        { name: n.depth, value: 0.25 },
        { name: n.seen, value: "2024-03-15T14:30:00.000Z" },
        { name: n.risk, value: "Shutdown" },
        { name: n.owner, value: { id: "u-1", name: "Jane Doe" } },
        {
          name: n.team,
          value: [
            { id: "u-1", name: "Jane" },
            { id: "u-2", name: "Li" },
          ],
        },
        { name: n.note, value: null },
      ],
    });
  });

  it.each([
    ["MM/dd/yyyy HH:mm:ss", "12/31/2023 23:59:58", "2023-12-31T23:59:58.000Z"],
    ["ISO 8601 UTC", "2024-03-15T14:30:00Z", "2024-03-15T14:30:00.000Z"],
    ["ISO 8601 with offset", "2024-03-15T14:30:00-01:00", "2024-03-15T15:30:00.000Z"],
  ])("accepts a date as %s and returns ISO 8601 UTC", async (_, input, output) => {
    expect(valueOf(await dryRun([...base(), { name: n.seen, value: input }]), n.seen)).toBe(output);
  });

  it("applies the default to a null value and to a property not given", async () => {
    expect(valueOf(await dryRun([...base(), { name: n.count, value: null }]), n.count)).toBe(3);
    expect(valueOf(await dryRun(base()), n.count)).toBe(3);
  });

  it("treats an empty multiselect as null", async () => {
    expect(valueOf(await dryRun([...base(), { name: n.team, value: [] }]), n.team)).toBeNull();
  });

  it("accepts the top-level and nested element names of the classification", async () => {
    for (const element of ["Low", "High", "Critical", "Shutdown"]) {
      expect(valueOf(await dryRun([...base(), { name: n.risk, value: element }]), n.risk)).toBe(element);
    }
  });
});

type Case = [string, () => { name: string; value?: unknown }[], string, string];

const invalid: Case[] = [
  ["text not matching the regex", () => [{ name: n.tag, value: "ab-12" }], "body.properties.1.value", "regex"],
  ["text that is a number", () => [{ name: n.tag, value: 12 }], "body.properties.1.value", "type"],
  ["boolean as text", () => [{ name: n.inspected, value: "true" }], "body.properties.0.value", "type"],
  ["integer with a fraction", () => [{ name: n.count, value: 1.5 }], "body.properties.1.value", "type"],
  ["integer beyond the safe range", () => [{ name: n.count, value: 9007199254740992 }], "body.properties.1.value", "type"],
  ["integer as text", () => [{ name: n.count, value: "4" }], "body.properties.1.value", "type"],
  ["decimal as text", () => [{ name: n.depth, value: "0.5" }], "body.properties.1.value", "type"],
  ["date in an unknown form", () => [{ name: n.seen, value: "15.03.2024" }], "body.properties.1.value", "type"],
  ["date that does not exist", () => [{ name: n.seen, value: "02/30/2024 10:00" }], "body.properties.1.value", "type"],
  ["date as a number", () => [{ name: n.seen, value: 1710513000000 }], "body.properties.1.value", "type"],
  ["classification element not in the tree", () => [{ name: n.risk, value: "Huge" }], "body.properties.1.value", "classificationElement"],
  ["classification element in another case", () => [{ name: n.risk, value: "low" }], "body.properties.1.value", "classificationElement"],
  ["owner without id", () => [{ name: n.owner, value: { name: "Jane" } }], "body.properties.1.value", "type"],
  ["owner with an empty id", () => [{ name: n.owner, value: { id: " ", name: "Jane" } }], "body.properties.1.value", "type"],
  ["owners on a single-select property", () => [{ name: n.owner, value: [{ id: "u", name: "J" }] }], "body.properties.1.value", "type"],
  ["one owner on a multiselect property", () => [{ name: n.team, value: { id: "u", name: "J" } }], "body.properties.1.value", "type"],
  [
    "the same owner twice",
    () => [
      {
        name: n.team,
        value: [
          { id: "u", name: "J" },
          { id: "u", name: "J" },
        ],
      },
    ],
    "body.properties.1.value",
    "duplicate",
  ],
  ["a name not linked to the type", () => [{ name: "colour", value: "red" }], "body.properties.1.name", "unknownProperty"],
  [
    "a name given twice",
    () => [
      { name: n.note, value: "a" },
      { name: n.note, value: "b" },
    ],
    "body.properties.2.name",
    "duplicate",
  ],
];

describe("linked values: every rule", () => {
  it.each(invalid)("%s -> valid false naming the field", async (_, values, field, rule) => {
    const given = values();
    const body = await dryRun(given.some((v) => v.name === n.inspected) ? given : [...base(), ...given]);
    expect(body.valid).toBe(false);
    expect(body.code).toBe("ValidationFailed");
    expect(body.errors).toEqual([expect.objectContaining({ field, rule })]);
  });

  it("shows the regexErrorMessage as the message", async () => {
    const body = await dryRun([...base(), { name: n.tag, value: "nope" }]);
    expect(body.errors[0].message).toBe("Use two capitals, a dash and digits (AA-123).");
  });

  it("refuses a required property given as null (at its index) and not given (by name)", async () => {
    expect((await dryRun([{ name: n.inspected, value: null }])).errors).toEqual([
      expect.objectContaining({ field: "body.properties.0.value", rule: "required" }),
    ]);
    expect((await dryRun([])).errors).toEqual([expect.objectContaining({ field: `body.properties.${n.inspected}`, rule: "required" })]);
  });

  it("reports every problem, not only the first", async () => {
    const body = await dryRun([
      { name: n.tag, value: "bad" },
      { name: n.count, value: "x" },
      { name: "ghost", value: 1 },
      { name: n.risk, value: "Nope" },
    ]);
    expect(body.errors.map((e: { field: string; rule: string }) => `${e.field}:${e.rule}`).sort()).toEqual(
      [
        "body.properties.0.value:regex",
        "body.properties.1.value:type",
        "body.properties.2.name:unknownProperty",
        "body.properties.3.value:classificationElement",
        `body.properties.${n.inspected}:required`,
      ].sort(),
    );
  });

  it("uses only definitions of the application rule when one is given", async () => {
    const deviation = await createPropertyDefinition({ applicationRule: "Deviation" });
    const typeRule = await createPropertyDefinition({ applicationRule: "deviationType" });
    const type = await createEntityType();
    await linkToEntityType(type.id, [deviation.id, typeRule.id]);
    const res = await call("/PropertyDefinitions/DryRun", {
      method: "POST",
      body: {
        entityTypeId: type.id,
        applicationRule: "Deviation",
        properties: [
          { name: deviation.name, value: "ok" },
          { name: typeRule.name, value: "not here" },
        ],
      },
    });
    expect(res.body.errors).toEqual([expect.objectContaining({ field: "body.properties.1.name", rule: "unknownProperty" })]);
    const ok = await call("/PropertyDefinitions/DryRun", {
      method: "POST",
      body: { entityTypeId: type.id, applicationRule: "deviatioType", properties: [{ name: typeRule.name, value: "fine" }] },
    });
    expect(ok.body).toEqual({ valid: true, properties: [{ name: typeRule.name, value: "fine" }] });
  });
});
