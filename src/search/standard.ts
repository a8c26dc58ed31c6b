/**
 * The standard indices (spec 2.10): their names, mappings and, for the entities this service owns,
 * how their documents are built from D1. Each index is a row of `search_indices` from the first start
 * (the migration inserts them, with the fixed ids below) and its documents live in its SearchIndex
 * Durable Object. Indices over entities of other services (risks, channels, structure node references)
 * have their mapping and no source here: an operator feeds them with a library file, as a custom index.
 * Channels were such an index; since issue 35 they are this service's own and the index is built from D1.
 */
import type { Database } from "../db/statements";
import { PERMISSIONS, type Permission } from "../pkg/permissions";
import type { Mapping } from "./mapping";

/** A document as the index stores it. */
export interface SearchDocument {
  key: string;
  fields: Record<string, unknown>;
  /** The permission a caller needs to see it (the resource's own read permission); null: the index's readers. */
  permission: string | null;
}

/** Reads documents of one standard index from D1, by key or a page at a time in key order. */
export interface DocumentSource {
  permission: Permission;
  /** The documents of these keys; a key without one (deleted) is simply absent. */
  byKeys(db: Database, keys: readonly string[]): Promise<SearchDocument[]>;
  /** Up to `limit` documents with keys after `after`, in key order. */
  page(db: Database, after: string, limit: number): Promise<SearchDocument[]>;
}

export interface StandardIndex {
  id: string;
  name: string;
  displayName: string;
  description: string;
  mapping: Mapping;
  /** Null: the entities live in another service; the index is fed by a library file. */
  source: DocumentSource | null;
}

const text = (displayName: string, alwaysShow = false) => ({ type: "text" as const, displayName, ...(alwaysShow ? { alwaysShow } : {}) });
const keyword = (displayName: string, alwaysShow = false) => ({
  type: "keyword" as const,
  displayName,
  ...(alwaysShow ? { alwaysShow } : {}),
});
const date = (displayName: string) => ({ type: "date" as const, displayName });
const number = (displayName: string) => ({ type: "number" as const, displayName });
const owner = { type: "keyword" as const, displayName: "Object owner", alwaysShow: true, isIdentity: true };

/** Splits `[{kind,name}]` JSON (designated assets) into names per kind. */
function assetNames(json: string | null): Record<"plants" | "mainSystems" | "equipment" | "designObjects", string[]> {
  const out = { plants: [] as string[], mainSystems: [] as string[], equipment: [] as string[], designObjects: [] as string[] };
  for (const a of JSON.parse(json ?? "[]") as { kind: string; name: string }[]) {
    const list =
      a.kind === "plant"
        ? out.plants
        : a.kind === "mainSystem"
          ? out.mainSystems
          : a.kind === "equipment"
            ? out.equipment
            : a.kind === "designObject"
              ? out.designObjects
              : null;
    if (list && !list.includes(a.name)) list.push(a.name);
  }
  return out;
}

const designated = (kind: string, idColumn: string) =>
  `(SELECT json_group_array(json_object('kind', a.kind, 'name', a.name)) FROM designations g JOIN assets a ON ` +
  `a.id = g.asset_id WHERE g.entity_kind = '${kind}' AND g.entity_id = ${idColumn}) AS assets`;

const strings = (json: string | null) => (JSON.parse(json ?? "[]") as (string | null)[]).filter((s): s is string => typeof s === "string");
const compact = (fields: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== null && v !== undefined && !(Array.isArray(v) && v.length === 0)));

/**
 * A source from one SELECT whose WHERE is completed with the key condition: `{key} > ?1 ORDER BY
 * {key} LIMIT ?2` for pages, `{key} IN (json_each(?1))` for keys. Every string here is our own SQL.
 */
function sqlSource<Row>(
  permission: Permission,
  select: string,
  keyColumn: string,
  toDocument: (row: Row) => SearchDocument,
  where = "1 = 1",
): DocumentSource {
  return {
    permission,
    async byKeys(db, keys) {
      if (keys.length === 0) return [];
      const { results } = await db
        .prepare(`${select} WHERE ${where} AND ${keyColumn} IN (SELECT value FROM json_each(?1))`)
        .bind(JSON.stringify(keys))
        .all<Row>();
      return results.map(toDocument);
    },
    async page(db, after, limit) {
      const { results } = await db
        .prepare(`${select} WHERE ${where} AND ${keyColumn} > ?1 ORDER BY ${keyColumn} LIMIT ?2`)
        .bind(after, limit)
        .all<Row>();
      return results.map(toDocument);
    },
  };
}

interface DeviationRow {
  id: string;
  reference_id: string;
  description: string | null;
  status: string;
  type_name: string | null;
  owner_id: string;
  owner_name: string | null;
  risk_name: string | null;
  created_at: string;
  updated_at: string;
  assets: string | null;
  work_items: string | null;
}
const deviations = sqlSource<DeviationRow>(
  PERMISSIONS.workRead,
  `SELECT d.id, d.reference_id, d.description, d.status, et.name AS type_name, d.owner_id, d.owner_name, d.risk_name,
  d.created_at, d.updated_at, ${designated("deviation", "d.id")},
     (SELECT json_group_array(w.display_name) FROM deviation_work_items l JOIN work_items w ON w.id = l.work_item_id WHERE
     l.deviation_id = d.id) AS work_items
   FROM deviations d LEFT JOIN entity_types et ON et.id = d.type_id`,
  "d.id",
  (r) => ({
    key: r.id,
    permission: PERMISSIONS.workRead,
    fields: compact({
      referenceId: r.reference_id,
      description: r.description,
      status: r.status,
      type: r.type_name,
      objectOwner: r.owner_name ?? r.owner_id,
      objectOwnerId: r.owner_id,
      risk: r.risk_name,
      ...assetNames(r.assets),
      workItems: strings(r.work_items),
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    }),
  }),
);

interface AssetRow {
  id: string;
  kind: string;
  name: string;
  parent_name: string | null;
  parent_kind: string | null;
  plant_name: string | null;
  organization: string | null;
  children: string | null;
  deviations: string | null;
  created_at: string;
  updated_at: string;
}
function assets(kind: "equipment" | "mainSystem" | "plant" | "designObject"): DocumentSource {
  return sqlSource<AssetRow>(
    PERMISSIONS.assetsRead,
    `SELECT a.id, a.kind, a.name, p.name AS parent_name, p.kind AS parent_kind, pl.name AS plant_name, org.name AS
    organization, a.created_at, a.updated_at,
       (SELECT json_group_array(json_object('kind', c.kind, 'name', c.name)) FROM assets c WHERE c.parent_id = a.id) AS children,
       (SELECT json_group_array(d.reference_id) FROM designations g JOIN deviations d ON d.id = g.entity_id WHERE g.entity_kind
       = 'deviation' AND g.asset_id = a.id) AS deviations
     FROM assets a LEFT JOIN assets p ON p.id = a.parent_id LEFT JOIN assets pl ON pl.id = a.plant_id LEFT JOIN assets org ON
     org.id = COALESCE(CASE WHEN a.kind = 'plant' THEN a.parent_id END, pl.parent_id)`,
    "a.id",
    (r) => {
      const children = assetNames(r.children);
      return {
        key: r.id,
        permission: PERMISSIONS.assetsRead,
        fields: compact({
          name: r.name,
          plant: kind === "plant" ? null : r.plant_name,
          mainSystem: r.parent_kind === "mainSystem" ? r.parent_name : null,
          organization: r.organization,
          mainSystems: kind === "plant" ? children.mainSystems : null,
          equipment: kind === "mainSystem" ? children.equipment : null,
          designObjects: kind === "equipment" ? null : children.designObjects,
          deviations: strings(r.deviations),
          createdAt: r.created_at,
          updatedAt: r.updated_at,
        }),
      };
    },
    `a.kind = '${kind}'`,
  );
}

interface WorkItemRow {
  id: string;
  display_name: string;
  reference_id: string | null;
  status: string;
  due_date: string | null;
  owner_id: string;
  owner_name: string | null;
  tags: string;
  created_at: string;
  updated_at: string;
  assets: string | null;
  activities: string | null;
  deviations: string | null;
}
const workItems = sqlSource<WorkItemRow>(
  PERMISSIONS.workRead,
  `SELECT w.id, w.display_name, w.reference_id, w.status, w.due_date, w.owner_id, w.owner_name, w.tags, w.created_at,
  w.updated_at, ${designated("workItem", "w.id")},
     (SELECT json_group_array(x.display_name) FROM activities x WHERE x.work_item_id = w.id) AS activities,
     (SELECT json_group_array(d.reference_id) FROM deviation_work_items l JOIN deviations d ON d.id = l.deviation_id WHERE
     l.work_item_id = w.id) AS deviations
   FROM work_items w`,
  "w.id",
  (r) => ({
    key: r.id,
    permission: PERMISSIONS.workRead,
    fields: compact({
      displayName: r.display_name,
      referenceId: r.reference_id,
      status: r.status,
      dueDate: r.due_date,
      objectOwner: r.owner_name ?? r.owner_id,
      objectOwnerId: r.owner_id,
      tags: strings(r.tags),
      activities: strings(r.activities),
      deviations: strings(r.deviations),
      ...assetNames(r.assets),
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    }),
  }),
);

interface ActivityRow {
  id: string;
  display_name: string;
  reference_id: string | null;
  status: string;
  date_of_activity: string | null;
  owner_id: string;
  owner_name: string | null;
  responsible_name: string | null;
  work_item: string | null;
  created_at: string;
  updated_at: string;
  assets: string | null;
  deviations: string | null;
}
const ACTIVITY_SELECT = `SELECT x.id, x.display_name, x.reference_id, x.status, x.date_of_activity, x.owner_id, x.owner_name,
  x.responsible_name, w.display_name AS work_item, x.created_at, x.updated_at, ${designated("activity", "x.id")},
     (SELECT json_group_array(d.reference_id) FROM deviation_work_items l JOIN deviations d ON d.id = l.deviation_id WHERE
     l.work_item_id = x.work_item_id) AS deviations
   FROM activities x LEFT JOIN work_items w ON w.id = x.work_item_id`;
const activityFields = (r: ActivityRow) => ({
  displayName: r.display_name,
  referenceId: r.reference_id,
  status: r.status,
  dateOfActivity: r.date_of_activity,
  objectOwner: r.owner_name ?? r.owner_id,
  objectOwnerId: r.owner_id,
  responsible: r.responsible_name,
  workItem: r.work_item,
  deviations: strings(r.deviations),
  ...assetNames(r.assets),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});
const activities = sqlSource<ActivityRow>(PERMISSIONS.workRead, ACTIVITY_SELECT, "x.id", (r) => ({
  key: r.id,
  permission: PERMISSIONS.workRead,
  fields: compact(activityFields(r)),
}));

/** Input formats per activity input index (spec 2.10: date; integer or decimal; all others). */
const INPUT_FORMATS = { date: ["date", "datetime", "dateTime"], number: ["integer", "decimal", "number"] } as const;
type InputKind = "date" | "number" | "text";
interface InputRow {
  activity_id: string;
  input_template_id: string;
  name: string;
  input_display_name: string | null;
  format: string;
  value: string | null;
  activity_name: string;
  owner_id: string;
  owner_name: string | null;
  status: string;
  assets: string | null;
}
function activityInputs(kind: InputKind): DocumentSource {
  const formats = [...INPUT_FORMATS.date, ...INPUT_FORMATS.number].map((f) => `'${f}'`).join(", ");
  const where = kind === "text" ? `i.format NOT IN (${formats})` : `i.format IN (${INPUT_FORMATS[kind].map((f) => `'${f}'`).join(", ")})`;
  const select = `SELECT i.activity_id, i.input_template_id, i.name, i.display_name AS input_display_name, i.format, i.value,
  x.display_name AS activity_name, x.owner_id, x.owner_name, x.status, ${designated("activity", "x.id")}
     FROM activity_inputs i JOIN activities x ON x.id = i.activity_id`;
  const toDocument = (r: InputRow): SearchDocument => {
    const raw = r.value === null ? null : (JSON.parse(r.value) as unknown);
    let value: unknown = raw === null ? null : typeof raw === "string" ? raw : JSON.stringify(raw);
    if (kind === "number") value = typeof raw === "number" ? raw : raw === null || raw === "" ? null : Number(raw);
    if (kind === "number" && !Number.isFinite(value)) value = null;
    if (kind === "date" && typeof value === "string" && Number.isNaN(Date.parse(value))) value = null;
    return {
      key: `${r.activity_id}:${r.input_template_id}`,
      permission: PERMISSIONS.workRead,
      fields: compact({
        activityId: r.activity_id,
        activity: r.activity_name,
        activityStatus: r.status,
        input: r.name,
        inputDisplayName: r.input_display_name,
        format: r.format,
        value,
        objectOwner: r.owner_name ?? r.owner_id,
        objectOwnerId: r.owner_id,
        ...assetNames(r.assets),
      }),
    };
  };
  // Documents are keyed `{activityId}:{inputTemplateId}`. Events name activities, so a key ending in
  // ':' stands for every input of that activity (the index replaces all documents with that prefix).
  return {
    permission: PERMISSIONS.workRead,
    async byKeys(db, keys) {
      const ids = [...new Set(keys.map((k) => k.split(":")[0] ?? k))];
      if (ids.length === 0) return [];
      const { results } = await db
        .prepare(`${select} WHERE ${where} AND i.activity_id IN (SELECT value FROM json_each(?1))`)
        .bind(JSON.stringify(ids))
        .all<InputRow>();
      return results.map(toDocument);
    },
    async page(db, after, limit) {
      const [activityId = "", templateId = ""] = after.split(":");
      const { results } = await db
        .prepare(
          `${select} WHERE ${where} AND (i.activity_id, i.input_template_id) > (?1, ?2) ORDER BY i.activity_id, ` +
            `i.input_template_id LIMIT ?3`,
        )
        .bind(activityId, templateId, limit)
        .all<InputRow>();
      return results.map(toDocument);
    },
  };
}

interface ChannelRow {
  id: string;
  channel_number: number;
  name: string;
  description: string | null;
  unit: string;
  asset_id: string;
  asset_kind: string;
  asset_name: string;
  parent_kind: string | null;
  parent_name: string | null;
  grand_kind: string | null;
  grand_name: string | null;
  type_name: string;
  origin_name: string;
  availability_name: string;
  next_inspection_at: string | null;
  created_at: string;
  updated_at: string;
  node_ids: string;
}
/**
 * The service's own channels (issue 35), as the original index named them: main systems, the
 * availability, the data origin and structure node references (here the asset the channel is on and
 * the assets above it, by id). An asset's parent is at most two levels up from a channel's asset
 * (plant > main system > equipment or design object), so two joins find every ancestor.
 */
const channelSource = sqlSource<ChannelRow>(
  PERMISSIONS.measurementsRead,
  `SELECT ch.id, ch.channel_number, ch.name, ch.description, ch.unit, ch.asset_id, a.kind AS asset_kind, a.name AS asset_name,
     p.kind AS parent_kind, p.name AS parent_name, g.kind AS grand_kind, g.name AS grand_name, t.name AS type_name,
     o.name AS origin_name, v.name AS availability_name, ch.next_inspection_at, ch.created_at, ch.updated_at,
     json_array(ch.asset_id, p.id, g.id) AS node_ids
   FROM channels ch JOIN assets a ON a.id = ch.asset_id LEFT JOIN assets p ON p.id = a.parent_id
     LEFT JOIN assets g ON g.id = p.parent_id JOIN channel_catalogue t ON t.id = ch.channel_type_id
     JOIN channel_catalogue o ON o.id = ch.data_origin_id JOIN channel_catalogue v ON v.id = ch.availability_id`,
  "ch.id",
  (r) => {
    const chain = [
      { kind: r.asset_kind, name: r.asset_name },
      ...(r.parent_kind !== null && r.parent_name !== null ? [{ kind: r.parent_kind, name: r.parent_name }] : []),
      ...(r.grand_kind !== null && r.grand_name !== null ? [{ kind: r.grand_kind, name: r.grand_name }] : []),
    ];
    const names = assetNames(JSON.stringify(chain));
    return {
      key: r.id,
      permission: PERMISSIONS.measurementsRead,
      fields: compact({
        name: r.name,
        channelNumber: r.channel_number,
        description: r.description,
        channelType: r.type_name,
        unit: r.unit,
        availability: r.availability_name,
        dataOrigin: r.origin_name,
        asset: r.asset_name,
        ...names,
        structureNodeReferences: strings(r.node_ids),
        nextInspectionAt: r.next_inspection_at,
        createdAt: r.created_at,
        updatedAt: r.updated_at,
      }),
    };
  },
);

const assetCommon = {
  plant: keyword("Plant"),
  organization: keyword("Organization"),
  deviations: keyword("Deviations"),
  createdAt: date("Created"),
  updatedAt: date("Updated"),
};
const designatedFields = {
  plants: keyword("Plants"),
  mainSystems: keyword("Main systems"),
  equipment: keyword("Equipment"),
  designObjects: keyword("Design objects"),
};
const personFields = { objectOwner: owner, objectOwnerId: keyword("Object owner id") };
const inputMapping = (valueType: "date" | "number" | "text"): Mapping => ({
  activityId: keyword("Activity id"),
  activity: text("Activity", true),
  activityStatus: keyword("Activity status"),
  input: keyword("Input", true),
  inputDisplayName: text("Input display name"),
  format: keyword("Format"),
  value: { type: valueType, displayName: "Value", alwaysShow: true },
  ...personFields,
  ...designatedFields,
});

const id = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`;
const external =
  " Its entities live in another service: it answers empty results until an operator feeds it with a library file " +
  "(PUT /Indices/{id}/File).";

export const STANDARD_INDICES: readonly StandardIndex[] = [
  {
    id: id(1),
    name: "platform-risks",
    displayName: "Risks",
    description: `Risks with mitigations, assessment results, techniques, population items and relationships.${external}`,
    source: null,
    mapping: {
      name: text("Name", true),
      description: text("Description", true),
      status: keyword("Status", true),
      mitigations: text("Mitigations"),
      assessmentResults: text("Assessment results"),
      techniques: keyword("Techniques"),
      populationItems: keyword("Population items"),
      relationships: keyword("Relationships"),
      ...personFields,
      ...designatedFields,
    },
  },
  {
    id: id(2),
    name: "platform-deviations",
    displayName: "Deviations",
    description: "Deviations with their risk, main systems, equipment, plants and work items.",
    source: deviations,
    mapping: {
      referenceId: keyword("Reference id", true),
      description: text("Description", true),
      status: keyword("Status", true),
      type: keyword("Type"),
      risk: keyword("Risk"),
      ...personFields,
      ...designatedFields,
      workItems: text("Work items"),
      createdAt: date("Created"),
      updatedAt: date("Updated"),
    },
  },
  {
    id: id(3),
    name: "platform-equipment",
    displayName: "Equipment",
    description: "Equipment with its plant, main system, organization, design objects and deviations.",
    source: assets("equipment"),
    mapping: {
      name: text("Name", true),
      mainSystem: keyword("Main system", true),
      ...assetCommon,
      designObjects: keyword("Design objects"),
    },
  },
  {
    id: id(4),
    name: "platform-main-systems",
    displayName: "Main systems",
    description: "Main systems with their plant, organization, equipment and deviations.",
    source: assets("mainSystem"),
    mapping: { name: text("Name", true), ...assetCommon, equipment: keyword("Equipment"), designObjects: keyword("Design objects") },
  },
  {
    id: id(5),
    name: "platform-channels",
    displayName: "Channels",
    description:
      "Channels (measurement points) with their asset, main systems, channel type, availability, data origin and structure " +
      "node references (the ids of the asset and the assets above it).",
    source: channelSource,
    mapping: {
      name: text("Name", true),
      channelNumber: number("Channel number"),
      description: text("Description"),
      channelType: keyword("Channel type", true),
      unit: keyword("Unit"),
      mainSystems: keyword("Main systems", true),
      availability: keyword("Availability"),
      dataOrigin: keyword("Data origin"),
      asset: keyword("Asset"),
      plants: keyword("Plants"),
      equipment: keyword("Equipment"),
      designObjects: keyword("Design objects"),
      structureNodeReferences: keyword("Structure node references"),
      nextInspectionAt: date("Next inspection"),
      createdAt: date("Created"),
      updatedAt: date("Updated"),
    },
  },
  {
    id: id(6),
    name: "platform-work-items",
    displayName: "Work items",
    description: "Work items with their activities, deviations, tags and primary assets.",
    source: workItems,
    mapping: {
      displayName: text("Display name", true),
      referenceId: keyword("Reference id", true),
      status: keyword("Status", true),
      dueDate: date("Due date"),
      ...personFields,
      tags: keyword("Tags"),
      activities: text("Activities"),
      deviations: keyword("Deviations"),
      ...designatedFields,
      createdAt: date("Created"),
      updatedAt: date("Updated"),
    },
  },
  {
    id: id(7),
    name: "platform-structure-node-reference",
    displayName: "Structure node references",
    description: `Objects that have a structure node reference.${external}`,
    source: null,
    mapping: { name: text("Name", true), objectType: keyword("Object type", true), structureNode: keyword("Structure node", true) },
  },
  {
    id: id(8),
    name: "platform-plants",
    displayName: "Plants",
    description: "Plants with their organization and main systems.",
    source: assets("plant"),
    mapping: {
      name: text("Name", true),
      organization: keyword("Organization", true),
      mainSystems: keyword("Main systems"),
      designObjects: keyword("Design objects"),
      deviations: keyword("Deviations"),
      createdAt: date("Created"),
      updatedAt: date("Updated"),
    },
  },
  {
    id: id(9),
    name: "platform-main-system-objects",
    displayName: "Main system objects",
    description: "Design objects in a main system, with their plant and structure.",
    source: assets("designObject"),
    mapping: { name: text("Name", true), mainSystem: keyword("Main system", true), ...assetCommon },
  },
  {
    id: id(10),
    name: "platform-activities",
    displayName: "Activities",
    description: "Activities with their work item, deviations, main systems and equipment.",
    source: activities,
    mapping: {
      displayName: text("Display name", true),
      referenceId: keyword("Reference id", true),
      status: keyword("Status", true),
      dateOfActivity: date("Date of activity"),
      ...personFields,
      responsible: keyword("Responsible"),
      workItem: text("Work item"),
      deviations: keyword("Deviations"),
      ...designatedFields,
      createdAt: date("Created"),
      updatedAt: date("Updated"),
    },
  },
  {
    id: id(11),
    name: "platform-activity-date-inputs",
    displayName: "Activity date inputs",
    description: "Activity inputs of format date, with their activity and its assets.",
    source: activityInputs("date"),
    mapping: inputMapping("date"),
  },
  {
    id: id(12),
    name: "platform-activity-number-inputs",
    displayName: "Activity number inputs",
    description: "Activity inputs of format integer or decimal, with their activity and its assets.",
    source: activityInputs("number"),
    mapping: inputMapping("number"),
  },
  {
    id: id(13),
    name: "platform-activity-text-inputs",
    displayName: "Activity text inputs",
    description: "Activity inputs of every other format, with their activity and its assets.",
    source: activityInputs("text"),
    mapping: inputMapping("text"),
  },
];

const byId = new Map(STANDARD_INDICES.map((i) => [i.id, i]));
export const standardIndex = (id: string): StandardIndex | undefined => byId.get(id);
export const standardIndexByName = (name: string): StandardIndex | undefined => STANDARD_INDICES.find((i) => i.name === name);

/**
 * Which standard documents an event changes: the entity's own, and those that show it (an asset's
 * document lists the deviations designating it). A deleted entity's related documents are repaired by
 * the daily full synchronisation (its designations are gone with it).
 */
export async function affectedDocuments(db: Database, kind: string, id: string, deleted: boolean): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  const add = (indexName: string, keys: string[]) => {
    const index = standardIndexByName(indexName);
    if (index && keys.length > 0) out.set(index.id, [...(out.get(index.id) ?? []), ...keys]);
  };
  const linkedAssets = async (entityKind: string) => {
    if (deleted) return;
    const { results } = await db
      .prepare("SELECT asset_id, asset_kind FROM designations WHERE entity_kind = ?1 AND entity_id = ?2")
      .bind(entityKind, id)
      .all<{ asset_id: string; asset_kind: string }>();
    for (const r of results) add(ASSET_INDEX[r.asset_kind] ?? "", [r.asset_id]);
  };
  switch (kind) {
    case "deviation":
      add("platform-deviations", [id]);
      await linkedAssets("deviation");
      break;
    case "workItem":
      add("platform-work-items", [id]);
      break;
    case "activity":
      add("platform-activities", [id]);
      for (const name of ["platform-activity-date-inputs", "platform-activity-number-inputs", "platform-activity-text-inputs"])
        add(name, [`${id}:`]);
      break;
    case "channel":
    case "channelAnalysis":
      add("platform-channels", [id]);
      break;
    case "asset": {
      const row = deleted
        ? null
        : await db.prepare("SELECT kind, parent_id FROM assets WHERE id = ?1").bind(id).first<{ kind: string; parent_id: string | null }>();
      // A deleted asset's kind is unknown here: remove it from every asset index.
      for (const name of row ? [ASSET_INDEX[row.kind]] : Object.values(ASSET_INDEX)) if (name) add(name, [id]);
      // Channels on the asset or under it show its name (kind and parent never change; a rename does).
      if (row) {
        const { results } = await db
          .prepare(
            "SELECT ch.id FROM channels ch JOIN assets a ON a.id = ch.asset_id WHERE ch.asset_id = ?1 OR a.parent_id = ?1 OR " +
              `a.parent_id IN (SELECT id FROM assets WHERE parent_id = ?1) LIMIT ${MAX_CHANNELS_PER_ASSET_EVENT}`,
          )
          .bind(id)
          .all<{ id: string }>();
        add(
          "platform-channels",
          results.map((r) => r.id),
        );
      }
      if (row?.parent_id) {
        const parent = await db.prepare("SELECT kind FROM assets WHERE id = ?1").bind(row.parent_id).first<{ kind: string }>();
        if (parent && ASSET_INDEX[parent.kind]) add(ASSET_INDEX[parent.kind] as string, [row.parent_id]);
      }
      break;
    }
  }
  return out;
}

/** Channels refreshed with an asset's event at most; beyond, the daily synchronisation repairs their asset names. */
const MAX_CHANNELS_PER_ASSET_EVENT = 1000;

const ASSET_INDEX: Record<string, string> = {
  equipment: "platform-equipment",
  mainSystem: "platform-main-systems",
  plant: "platform-plants",
  designObject: "platform-main-system-objects",
};
