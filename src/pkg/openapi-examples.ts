/**
 * Examples of request bodies that mean something in the domain, shown by the reference page (its
 * "Try it out" starts from them) and by generated clients instead of `"string"`. Keyed like
 * OPERATION_IDS (`METHOD /path`); defineRoute puts each on its route's JSON body.
 * test/conventions/openapi.test.ts validates every one against its body's schema in /openapi.json,
 * so an example that stops being valid fails the suite.
 *
 * They tell one story: pump P-101 of the north plant's feed water system corrodes; a deviation
 * records it, a work item from the tank inspection template follows it up, a job measures it and a
 * monitor watches the plant.
 */

const GENERAL_TYPE = "00000000-0000-4000-8000-000000000001";
const PUMP = "7c1e4b2a-3f5d-4a8e-9b6c-1d2e3f4a5b6c";
const FEED_WATER = "4a2b6c8d-1e3f-4a5b-8c7d-9e0f1a2b3c4d";
const DEVIATION = "0b9f3c5e-8a4f-4d6c-9a51-2c1f0e6a7b10";
const WORK_TEMPLATE = "5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a";
const ACTIVITY_TEMPLATE = "9e8d7c6b-5a4f-4e3d-9c2b-1a0f9e8d7c6b";
const WORK_ITEM = "2f3e4d5c-6b7a-4891-a2b3-c4d5e6f7a8b9";
const JOB_CONFIG = "6a5b4c3d-2e1f-4a0b-9c8d-7e6f5a4b3c2d";
const OUTPUT_TYPE = "3c2b1a0f-9e8d-4c7b-a6f5-e4d3c2b1a0f9";
const MODEL = "8f7e6d5c-4b3a-4291-8f0e-d1c2b3a4f5e6";
const MONITOR = "1b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e";
const INDEX = "00000000-0000-4000-8000-000000000002";

const deviation = {
  referenceId: "DEV-P101-CUI",
  description: "Corrosion under insulation on the discharge flange of feed pump P-101; wall loss estimated at 1.5 mm.",
  status: "new",
  typeId: GENERAL_TYPE,
  assetReference: { mainSystem: { id: FEED_WATER }, equipment: { id: PUMP } },
  metadata: { source: "inspection round 2026-W47" },
};

const workItem = {
  displayName: "Follow up CUI on P-101",
  referenceId: "WI-P101-2026-11",
  dueDate: "2026-12-01T08:00:00Z",
  tags: ["pump", "corrosion"],
  designations: [{ id: PUMP }],
  basedOn: [{ id: WORK_TEMPLATE }],
};

const workTemplate = {
  displayName: "Tank inspection",
  referenceId: "WT-TANK",
  tags: ["tank", "inspection"],
  activityTemplates: [{ activityTemplateId: ACTIVITY_TEMPLATE, order: 1 }],
};

const activityTemplate = {
  displayName: "Measure wall thickness",
  description: "Ultrasonic thickness at the four marked points of the shell.",
  inputTemplates: [
    {
      name: "thickness",
      displayName: "Wall thickness (mm)",
      format: "decimal",
      required: true,
      order: 1,
      // Each value becomes a reading of the Thickness channel on the asset the work item designates (issue 35).
      reading: { channelTypeId: "00000000-0000-4000-8000-0000000c0101", unit: "mm" },
    },
    { name: "coatingIntact", displayName: "Coating intact", format: "boolean", required: false, order: 2 },
  ],
};

const jobConfiguration = {
  name: "thickness-trend",
  description: "Fits the wall-thickness trend of each pump and posts the remaining life.",
  jobDefinition: "examples/hello:latest",
  runConfigs: { cpuCores: 1, memory: 1 },
  runOptions: { GREETING: "hi", THRESHOLD_MM: "3.0" },
  outputTypeId: OUTPUT_TYPE,
  frequency: { dayOfWeek: "monday", hour: 6, startDate: "2026-01-05T00:00:00" },
  timeZone: "Europe/Oslo",
  timeoutMinutes: 30,
};

const model = {
  name: "Pump criticality",
  description: "Scores pumps by wall loss and vibration.",
  modelDefinitionName: "models/criticality",
  modelDefinitionVersion: "1.0",
  status: "Active",
  cpuCores: 1,
  memory: 1,
  staticParameters: { BASE_CRITICALITY: "70" },
};

const monitor = {
  name: "North plant pumps",
  modelId: MODEL,
  status: "Active",
  triggerSchedule: "0 6 * * *",
  timeZone: "Europe/Oslo",
  instructions: "Inspect any pump that turns red within a week.",
};

const search = { text: "corrosi* pump", filter: "objectOwner eq me", order: "relevance", take: 20, facets: ["status"] };

export const REQUEST_EXAMPLES: Record<string, unknown> = {
  // Runs as it stands on any server (the reference page's Try it out, twice, makes two deviations): the
  // referenceId is left to the server (DEV-...) and no asset is named, since the story's ids exist nowhere.
  "POST /Deviations": { description: deviation.description, status: deviation.status, typeId: GENERAL_TYPE, metadata: deviation.metadata },
  // PUT replaces: the whole deviation, as read (read-only fields are ignored).
  "PUT /Deviations": { id: DEVIATION, ...deviation, status: "active", relationships: [], properties: [] },
  "POST /DeviationTypes": {
    name: "Corrosion",
    description: "Loss of wall from corrosion of any kind.",
    icon: { name: "corrosion", color: "#E53935" },
  },
  "POST /WorkItems": workItem,
  // The deviation, the work item that follows it up, and the link between them, in one request; runs as it stands.
  "POST /$batch": {
    operations: [
      { id: "deviation", method: "POST", path: "/Deviations", body: { description: deviation.description, typeId: GENERAL_TYPE } },
      { id: "work", method: "POST", path: "/WorkItems", body: { displayName: workItem.displayName, dueDate: workItem.dueDate } },
      { id: "link", method: "POST", path: "/Deviations/{{deviation.body.id}}/WorkItems/{{work.body.id}}" },
    ],
    onFailure: "stop",
  },
  "PUT /WorkItems": { id: WORK_ITEM, ...workItem, status: "active" },
  "POST /WorkTemplates": workTemplate,
  "POST /ActivityTemplates": activityTemplate,
  "POST /Activities": {
    basedOn: { id: ACTIVITY_TEMPLATE },
    workItemId: WORK_ITEM,
    displayName: "Measure wall thickness at P-101",
    inputs: [{ id: "thickness", value: 7.9 }],
  },
  "POST /Assets": { kind: "equipment", name: "P-101 feed pump", parentId: FEED_WATER },
  "POST /Categories": { name: "Corrosion" },
  "POST /PropertyDefinitions": {
    name: "insulationRemoved",
    format: "decimal",
    unit: "metre",
    applicationRule: "Deviation",
    required: false,
    instruction: "Length of insulation taken off to inspect the pipe under it.",
  },
  "POST /JobConfigurations": jobConfiguration,
  // PUT replaces: run options left out are removed, so send them again.
  "PUT /JobConfigurations": { id: JOB_CONFIG, ...jobConfiguration },
  "POST /Jobs/ChainExecution": {
    jobConfigIds: [JOB_CONFIG, "7b6a5c4d-3e2f-4a1b-8c9d-0e1f2a3b4c5d"],
    runOptions: { GREETING: "first job only" },
  },
  "POST /OutputTypes": {
    name: "remaining-life",
    schema: { type: "object", required: ["assetId", "years"], properties: { assetId: { type: "string" }, years: { type: "number" } } },
  },
  "POST /ModelDefinitions": { name: "models/criticality", version: "1.0", location: "ACR" },
  "POST /Models": model,
  "PUT /Models": { id: MODEL, ...model },
  "POST /Models/{id}/Populations": { name: "Feed water pumps", assetType: "Equipment" },
  "POST /Monitors": monitor,
  "PUT /Monitors": { id: MONITOR, ...monitor },
  "POST /Indices/{id}/Search": search,
  "POST /Queries": {
    name: "My open pump deviations",
    index: { id: INDEX },
    queryObject: search,
    metadata: { action: { isVisible: true, order: 1 } },
  },
  "POST /MediaReferences": {
    mediaId: "c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f",
    displayName: "P-101 flange",
    description: "Insulation removed, north side.",
  },
  "POST /UserStatuses": { name: "Awaiting scaffolding", status: "active", order: 1 },
  "POST /DataTypes": { id: "thickness-measurements", name: "Thickness measurements", allowedExtensions: ["csv", "xlsx"] },
  "POST /Classifications": {
    name: "Consequence class",
    elements: [
      { name: "high", displayName: "High", color: "#E53935", order: 1 },
      { name: "low", displayName: "Low", color: "#43A047", order: 2 },
    ],
  },
  "POST /EntityTypes": { name: "Rotating equipment", description: "Pumps, compressors and fans.", appliesTo: "Asset" },
};
