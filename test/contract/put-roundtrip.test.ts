/**
 * One update contract for every resource, generated from the OpenAPI document: every whole-object
 * `PUT /{Resource}` (id in the body) takes back what its own GET answered. The test creates one,
 * reads it, changes one writable field in what it read, sends the whole object back with the read's
 * ETag, and reads the change. A new whole-object PUT route fails here until it has a fixture below;
 * a PUT that is not a whole object (a sub-resource or an action) must be named as such.
 */
import { describe, expect, it } from "vitest";
import { createConfig } from "../dataprocessing/support";
import { createDataType, uploadFile } from "../support/factories/upload";
import { propertyDefinitionBody } from "../support/factories/properties";
import { call } from "../support/http";
import { libraryForm } from "../search/support";
import { createChannel } from "../measurements/support";
import { planSetup } from "../plans/support";

const unique = (prefix: string) => `${prefix}-${crypto.randomUUID().slice(0, 8)}`;

async function created(path: string, body: unknown): Promise<string> {
  const res = await call(path, { method: "POST", body });
  expect(res.status, `${path}: ${res.text}`).toBe(201);
  return res.body.id;
}

async function modelDefinition(): Promise<{ name: string; version: string }> {
  const name = `external/${unique("m")}`;
  await created("/ModelDefinitions", { name, version: "1", location: "External", uri: "https://models.example.com/score" });
  return { name, version: "1" };
}

async function model(): Promise<string> {
  const def = await modelDefinition();
  return created("/Models", {
    name: unique("model"),
    modelDefinitionName: def.name,
    modelDefinitionVersion: def.version,
    cpuCores: 1,
    memory: 1,
  });
}

async function media(): Promise<string> {
  const form = new FormData();
  form.append("File", new File([new TextEncoder().encode("report")], "report.txt", { type: "text/plain" }));
  form.append("Type", "document");
  const res = await call("/Medias", { method: "POST", rawBody: form });
  expect(res.status, res.text).toBe(201);
  return res.body.id;
}

/** A created resource: its id, and for a resource under another (a population) the collection path it was made on. */
type Created = string | { id: string; path: string };

/** A population of a new model (or of a monitor of it), on its owner's collection path. */
async function population(resource: "Models" | "Monitors"): Promise<Created> {
  const modelId = await model();
  const owner = resource === "Models" ? modelId : await created("/Monitors", { name: unique("monitor"), modelId });
  const path = `/${resource}/${owner}/Populations`;
  return { id: await created(path, { name: unique("population"), description: "round trip", assetType: "Plant" }), path };
}

/** How to make one of each resource, and which writable field to change (to a new value). */
const fixtures: Record<string, { create: () => Promise<Created>; field: string; value: () => unknown; derived?: string[] }> = {
  "/Activities": {
    create: async () => {
      const template = await created("/ActivityTemplates", { displayName: unique("AT") });
      return created("/Activities", { basedOn: { id: template } });
    },
    field: "displayName",
    value: () => unique("activity"),
  },
  "/ActivityTemplates": {
    create: () => created("/ActivityTemplates", { displayName: unique("AT") }),
    field: "displayName",
    value: () => unique("AT"),
  },
  "/ActivityTypes": { create: () => created("/ActivityTypes", { name: unique("type") }), field: "name", value: () => unique("type") },
  // A plant is its own plant: `plant.name` follows its name.
  "/Assets": {
    create: () => created("/Assets", { name: unique("plant"), kind: "plant" }),
    field: "name",
    value: () => unique("plant"),
    derived: ["plant"],
  },
  "/Categories": { create: () => created("/Categories", { name: unique("category") }), field: "name", value: () => unique("category") },
  "/Classifications": {
    create: () => created("/Classifications", { name: unique("classification") }),
    field: "description",
    value: () => unique("described"),
  },
  "/DataTypes": {
    create: async () => (await createDataType({ name: unique("readings") })).id,
    field: "name",
    value: () => unique("readings"),
  },
  "/DeviationTypes": {
    create: () => created("/DeviationTypes", { name: unique("deviation type") }),
    field: "name",
    value: () => unique("deviation type"),
  },
  "/Deviations": {
    create: () => created("/Deviations", { description: "crack at the weld" }),
    field: "description",
    value: () => unique("crack"),
  },
  "/EntityTypes": {
    create: () => created("/EntityTypes", { name: unique("workType"), appliesTo: "WorkItem" }),
    field: "name",
    value: () => unique("workType"),
  },
  "/Files": {
    create: async () => {
      const dataType = await createDataType({ name: unique("readings"), allowedExtensions: [".csv"] });
      return (await uploadFile(dataType.id, { name: "a.csv", type: "text/csv", content: "a,b\n1,2\n" })).body.id;
    },
    field: "status",
    value: () => "processed",
  },
  "/Indices": {
    create: async () => {
      const res = await call("/Indices", {
        method: "POST",
        rawBody: libraryForm({ Name: unique("idx"), DisplayName: "Round trip" }, "export default async function* () {}"),
        headers: { "api-version": "1.1" },
      });
      expect(res.status, res.text).toBe(201);
      return res.body.id;
    },
    field: "displayName",
    value: () => unique("index"),
    // Its first synchronisation runs by itself meanwhile.
    derived: ["status", "lastSynchronization", "documentCount", "nextSynchronizationAt", "mapping"],
  },
  "/JobConfigurations": { create: async () => (await createConfig()).id, field: "description", value: () => unique("described") },
  "/MediaReferences": {
    create: async () => created("/MediaReferences", { mediaId: await media(), displayName: "Report" }),
    field: "displayName",
    value: () => unique("report"),
  },
  "/ModelDefinitions": {
    create: async () => {
      const def = await modelDefinition();
      return (await call(`/ModelDefinitions/${encodeURIComponent(def.name)}/versions/${def.version}`)).body.id;
    },
    field: "uri",
    value: () => `https://models.example.com/${unique("score")}`,
  },
  "/Models": { create: model, field: "description", value: () => unique("described") },
  "/Models/{id}/Populations": { create: () => population("Models"), field: "name", value: () => unique("population") },
  "/Monitors": {
    create: async () => created("/Monitors", { name: unique("monitor"), modelId: await model() }),
    field: "instructions",
    value: () => unique("check the bearing"),
  },
  "/Monitors/{id}/Populations": { create: () => population("Monitors"), field: "description", value: () => unique("described") },
  "/OutputTypes": { create: () => created("/OutputTypes", { name: unique("output") }), field: "name", value: () => unique("output") },
  "/PropertyDefinitions": {
    create: () => created("/PropertyDefinitions", propertyDefinitionBody()),
    field: "instruction",
    value: () => unique("measure at the weld"),
  },
  "/Queries": {
    create: () =>
      created("/Queries", { name: unique("query"), index: { id: "00000000-0000-4000-8000-000000000002" }, queryObject: { text: "crack" } }),
    field: "description",
    value: () => unique("described"),
  },
  "/Subscriptions": {
    create: () =>
      created("/Subscriptions", {
        url: `https://hooks.example.com/${unique("hook")}`,
        filters: [{ entityKind: "deviation", action: "created" }],
      }),
    field: "description",
    value: () => unique("described"),
  },
  "/UserStatuses": {
    create: () => created("/UserStatuses", { name: unique("Awaiting parts"), status: "onHold" }),
    field: "name",
    value: () => unique("Awaiting parts"),
  },
  "/WorkItems": {
    create: () => created("/WorkItems", { displayName: unique("Inspection") }),
    field: "displayName",
    value: () => unique("Inspection"),
  },
  "/WorkTemplates": {
    create: () => created("/WorkTemplates", { displayName: unique("T") }),
    field: "displayName",
    value: () => unique("T"),
  },
  // Measurements (issue 35): channels and the Signals catalogues.
  "/Channels": {
    create: async () => (await createChannel()).id,
    field: "name",
    value: () => unique("CML"),
  },
  // Inspection plans (issue 36).
  "/InspectionPlans": {
    create: async () => {
      const { tree, templateId } = await planSetup();
      return created("/InspectionPlans", {
        name: unique("plan"),
        workTemplateId: templateId,
        assetIds: [tree.equipment.id],
        calendar: { every: { count: 1, unit: "years" } },
      });
    },
    field: "name",
    value: () => unique("plan"),
  },
  "/ChannelTypes": {
    create: () => created("/ChannelTypes", { name: unique("type"), quantity: "pressure" }),
    field: "name",
    value: () => unique("type"),
  },
  "/DataOrigins": {
    create: () => created("/DataOrigins", { name: unique("origin") }),
    field: "name",
    value: () => unique("origin"),
  },
  "/ChannelAvailabilities": {
    create: () => created("/ChannelAvailabilities", { name: unique("availability") }),
    field: "name",
    value: () => unique("availability"),
  },
};

// The asset catalogue under the original client's paths, one kind each (a plant is its own plant).
async function assetOf(kind: string): Promise<string> {
  const parentId =
    kind === "mainSystem" || kind === "equipment" ? await created("/Assets", { name: unique("plant"), kind: "plant" }) : null;
  return created("/Assets", { name: unique(kind), kind, parentId });
}
for (const [kind, paths] of [
  ["plant", ["/Plants"]],
  ["mainSystem", ["/MainSystems", "/MainSystem"]],
  ["equipment", ["/Equipment"]],
  ["organization", ["/Organizations", "/Organization"]],
] as const) {
  for (const path of paths) fixtures[path] = { create: () => assetOf(kind), field: "name", value: () => unique(kind), derived: ["plant"] };
}

/** PUT routes that are not a whole resource sent back: sub-resources and actions, each with its own tests. */
const notWholeObjects = new Set([
  "/ActivityTemplates/{id}/InputTemplates",
  "/Files/Uploads/{uploadId}/Parts/{partNumber}",
  "/Files/status",
  "/Files/{id}/Metadata",
  "/Indices/{id}/File",
  "/Indices/{index}/Resynchronization",
  "/MonitorJobs/{id}/{status}",
  "/PropertyDefinitions/{id}/InstructionImage",
  "/WorkTemplates/{id}/ActivityTemplates",
  "/WorkTemplates/{id}/SectionTemplates",
]);

const document = (await call("/openapi.json")).body as { paths: Record<string, Record<string, unknown>> };
const putPaths = Object.entries(document.paths)
  .filter(([, operations]) => "put" in operations)
  .map(([path]) => path)
  .sort();

describe("every whole-object PUT takes back what its GET answered", () => {
  it("knows every PUT route of the OpenAPI document", () => {
    const unknown = putPaths.filter((path) => !(path in fixtures) && !notWholeObjects.has(path));
    expect(unknown, "a new PUT route needs a fixture here, or a place among the sub-resource PUTs").toEqual([]);
  });

  for (const path of Object.keys(fixtures).sort()) {
    it(`PUT ${path}`, async () => {
      expect(putPaths).toContain(path);
      const { create, field, value, derived = [] } = fixtures[path]!;
      const made = await create();
      // The path the resource lives on: the route's own, or its owner's collection path (a population).
      const [at, id] = typeof made === "string" ? [path, made] : [made.path, made.id];
      const read = await call(`${at}/${id}`);
      expect(read.status, read.text).toBe(200);
      const etag = read.headers.get("etag");
      expect(etag).toBeTruthy();
      const changed = value();
      const put = await call(at, { method: "PUT", body: { ...read.body, [field]: changed }, headers: { "if-match": etag! } });
      expect(put.status, put.text).toBe(200);
      const after = await call(`${at}/${id}`);
      expect(after.body[field]).toEqual(changed);
      // Everything else reads as it did, but for what a write changes by itself.
      const untouched = Object.keys(read.body).filter((key) => ![field, ...derived, "updatedAt", "modifiedDate"].includes(key));
      for (const key of untouched) expect(after.body[key], `${path} ${key}`).toEqual(read.body[key]);
      // The ETag it read is gone: sending the old version back is a 412.
      const stale = await call(at, { method: "PUT", body: { ...read.body, [field]: value() }, headers: { "if-match": etag! } });
      expect(stale.status, stale.text).toBe(412);
      // A key that is neither writable nor read-only is still a 400 naming it.
      const unknownKey = await call(at, { method: "PUT", body: { ...after.body, notAField: 1 } });
      expect(unknownKey.status, unknownKey.text).toBe(400);
      expect(unknownKey.text).toContain("notAField");
    });
  }
});
