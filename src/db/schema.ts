/**
 * The D1 schema (drizzle). Migrations in migrations/ are generated from this file with
 * `npm run db:generate` and reviewed before they are committed; docs/storage.md describes each table.
 */
import { sql } from "drizzle-orm";
import {
  foreignKey,
  index,
  integer,
  primaryKey,
  real,
  sqliteTable,
  text,
  uniqueIndex,
  type AnySQLiteColumn,
} from "drizzle-orm/sqlite-core";

const audit = {
  etag: text("etag").notNull(),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
  createdBy: text("created_by"),
};

export const categories = sqliteTable(
  "categories",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    /** The name for uniqueness and case-insensitive lookups: NFC, Unicode case-folded (src/pkg/unicode.ts nameKey). */
    nameKey: text("name_key"),
    isDefault: integer("is_default", { mode: "boolean" }).notNull().default(false),
    ...audit,
  },
  (t) => [uniqueIndex("categories_name_uq").on(t.nameKey)],
);

export const classifications = sqliteTable(
  "classifications",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    /** The name for uniqueness and case-insensitive lookups: NFC, Unicode case-folded (src/pkg/unicode.ts nameKey). */
    nameKey: text("name_key"),
    format: text("format").notNull(),
    description: text("description"),
    ...audit,
  },
  (t) => [uniqueIndex("classifications_name_uq").on(t.nameKey)],
);

export const classificationElements = sqliteTable(
  "classification_elements",
  {
    id: text("id").primaryKey(),
    classificationId: text("classification_id")
      .notNull()
      .references(() => classifications.id, { onDelete: "cascade" }),
    parentId: text("parent_id"),
    /** Position among its siblings, so the tree reads back in the order it was written. */
    position: integer("position").notNull(),
    name: text("name").notNull(),
    displayName: text("display_name"),
    code: text("code"),
    applierCode: text("applier_code"),
    color: text("color"),
    sortOrder: integer("sort_order"),
    grade: real("grade"),
  },
  (t) => [
    uniqueIndex("classification_elements_name_uq").on(t.classificationId, t.name),
    index("classification_elements_parent_idx").on(t.classificationId, t.parentId, t.position),
  ],
);

export const propertyDefinitions = sqliteTable(
  "property_definitions",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    format: text("format").notNull(),
    regex: text("regex"),
    regexErrorMessage: text("regex_error_message"),
    unit: text("unit"),
    classificationId: text("classification_id").references(() => classifications.id),
    entityType: text("entity_type"),
    isMultiselect: integer("is_multiselect", { mode: "boolean" }).notNull().default(false),
    applicationRule: text("application_rule").notNull(),
    required: integer("required", { mode: "boolean" }).notNull().default(false),
    /** JSON of the default value in its API form. */
    defaultValue: text("default_value"),
    valueExpression: text("value_expression"),
    instruction: text("instruction"),
    /** R2 key of the instruction image (MEDIA bucket), when one was set. */
    instructionImageKey: text("instruction_image_key"),
    metadata: text("metadata"),
    categoryId: text("category_id")
      .notNull()
      .references(() => categories.id),
    ...audit,
  },
  (t) => [
    uniqueIndex("property_definitions_name_uq").on(t.name),
    index("property_definitions_rule_idx").on(t.applicationRule, t.name),
    index("property_definitions_category_idx").on(t.categoryId),
    index("property_definitions_classification_idx").on(t.classificationId),
  ],
);

export const entityTypes = sqliteTable(
  "entity_types",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    /** The name for uniqueness and case-insensitive lookups: NFC, Unicode case-folded (src/pkg/unicode.ts nameKey). */
    nameKey: text("name_key"),
    description: text("description"),
    /** The application rule of the definitions this type may link; null (General) accepts every rule. */
    appliesTo: text("applies_to"),
    iconName: text("icon_name"),
    iconColor: text("icon_color"),
    isDefault: integer("is_default", { mode: "boolean" }).notNull().default(false),
    metadata: text("metadata"),
    ...audit,
  },
  (t) => [uniqueIndex("entity_types_name_uq").on(t.nameKey)],
);

export const entityTypeProperties = sqliteTable(
  "entity_type_properties",
  {
    entityTypeId: text("entity_type_id")
      .notNull()
      .references(() => entityTypes.id, { onDelete: "cascade" }),
    propertyDefinitionId: text("property_definition_id")
      .notNull()
      .references(() => propertyDefinitions.id),
    position: integer("position").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.entityTypeId, t.propertyDefinitionId] }),
    index("entity_type_properties_definition_idx").on(t.propertyDefinitionId),
  ],
);

export const systemStatuses = sqliteTable("system_statuses", {
  name: text("name").primaryKey(),
  sortOrder: integer("sort_order").notNull(),
});

export const userStatuses = sqliteTable(
  "user_statuses",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    /** The name for uniqueness and case-insensitive lookups: NFC, Unicode case-folded (src/pkg/unicode.ts nameKey). */
    nameKey: text("name_key"),
    sortOrder: integer("sort_order").notNull(),
    status: text("status")
      .notNull()
      .references(() => systemStatuses.name),
    ...audit,
  },
  (t) => [uniqueIndex("user_statuses_name_uq").on(t.nameKey), index("user_statuses_order_idx").on(t.sortOrder)],
);

/**
 * Linked property values of every entity kind, one row per value (a multiselect value has one row per
 * element), with typed columns so filters and orders run on indexes: value_num holds integer,
 * decimal, boolean (0/1) and date (epoch ms) values; value_text holds text, classification element
 * names and entity owner ids. value_json keeps the value as the API returns it.
 */
export const propertyValues = sqliteTable(
  "property_values",
  {
    entityKind: text("entity_kind").notNull(),
    entityId: text("entity_id").notNull(),
    name: text("name").notNull(),
    position: integer("position").notNull().default(0),
    definitionId: text("definition_id").notNull(),
    valueText: text("value_text"),
    valueNum: real("value_num"),
    valueJson: text("value_json").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.entityKind, t.entityId, t.name, t.position] }),
    index("property_values_num_idx").on(t.entityKind, t.name, t.valueNum, t.entityId),
    index("property_values_text_idx").on(t.entityKind, t.name, t.valueText, t.entityId),
    index("property_values_definition_idx").on(t.definitionId),
  ],
);

/** Domain events, written in the same batch as the change they describe, then relayed to the queue. */
export const outbox = sqliteTable(
  "outbox",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    id: text("id").notNull(),
    entityKind: text("entity_kind").notNull(),
    entityId: text("entity_id").notNull(),
    action: text("action").notNull(),
    payload: text("payload").notNull(),
    occurredAt: text("occurred_at").notNull(),
    actorId: text("actor_id"),
    requestId: text("request_id"),
    dispatchedAt: text("dispatched_at"),
  },
  (t) => [uniqueIndex("outbox_id_uq").on(t.id), index("outbox_pending_idx").on(t.dispatchedAt, t.seq)],
);

/**
 * One-off data steps a SQL migration cannot do (they need the Worker's JavaScript), run by the minute
 * cron until they record themselves `done`, then never again. The migration that needs one inserts its
 * row, already `done` when there is nothing to do. `cursor` is the step's own progress (JSON).
 */
export const oneOffSteps = sqliteTable("one_off_steps", {
  name: text("name").primaryKey(),
  state: text("state", { enum: ["pending", "done"] }).notNull(),
  cursor: text("cursor"),
  updatedAt: text("updated_at").notNull(),
});

/** Events a queue consumer has handled, so a redelivered message is acknowledged without effect. */
export const processedEvents = sqliteTable("processed_events", {
  eventId: text("event_id").primaryKey(),
  processedAt: text("processed_at").notNull(),
});

/**
 * Uploaded media (spec 2.6). A row is written only after every R2 object it names exists, so a
 * client never sees a row without its bytes; R2 objects without a row are swept by the cron.
 * `variants` is the JSON list of stored sizes (Original, Medium, Small) with their keys and sizes;
 * `recognition` records the four image checks and which one failed.
 */
export const medias = sqliteTable(
  "medias",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    contentType: text("content_type").notNull(),
    size: integer("size").notNull(),
    checksum: text("checksum").notNull(),
    /** The type the client declared: image or document. */
    declaredType: text("declared_type").notNull(),
    isImage: integer("is_image", { mode: "boolean" }).notNull(),
    imageFormat: text("image_format"),
    width: integer("width"),
    height: integer("height"),
    variants: text("variants").notNull(),
    recognition: text("recognition").notNull(),
    ownerId: text("owner_id").notNull(),
    ownerName: text("owner_name"),
    ...audit,
  },
  // Default order createdAt desc, id: each filter's index ends with it (see deviations).
  (t) => [
    index("medias_created_idx").on(sql`${t.createdAt} desc`, t.id),
    index("medias_type_idx").on(t.declaredType, sql`${t.createdAt} desc`, t.id),
    index("medias_owner_idx").on(t.ownerId, sql`${t.createdAt} desc`, t.id),
  ],
);

/** Data types of uploaded files (spec 2.9): id and name unique across the API. */
export const dataTypes = sqliteTable(
  "data_types",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    /** The name for uniqueness and case-insensitive lookups: NFC, Unicode case-folded (src/pkg/unicode.ts nameKey). */
    nameKey: text("name_key"),
    /** JSON array of lower-case extensions without the dot, e.g. ["xlsx","xls","csv"]. */
    allowedExtensions: text("allowed_extensions").notNull(),
    ...audit,
  },
  (t) => [uniqueIndex("data_types_name_uq").on(t.nameKey)],
);

/**
 * Uploaded data files (spec 2.9). `state` is the storage state (uploading until every byte is in
 * R2, then ready); only ready files are visible. `status` is the business status of section 3.
 */
export const files = sqliteTable(
  "files",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    dataTypeId: text("data_type_id")
      .notNull()
      .references(() => dataTypes.id),
    size: integer("size").notNull(),
    contentType: text("content_type").notNull(),
    checksum: text("checksum"),
    r2Key: text("r2_key").notNull(),
    state: text("state").notNull(),
    status: text("status").notNull(),
    ownerId: text("owner_id").notNull(),
    ownerName: text("owner_name"),
    /** Access metadata (spec 2.9): equipment, mainSystem, plant or organization, and the object's id. */
    objectType: text("object_type"),
    objectId: text("object_id"),
    ...audit,
  },
  (t) => [
    // Default order createdAt desc, id, over ready files: each filter's index ends with it (see deviations).
    index("files_state_created_idx").on(t.state, sql`${t.createdAt} desc`, t.id),
    index("files_state_status_idx").on(t.state, t.status, sql`${t.createdAt} desc`, t.id),
    index("files_data_type_idx").on(t.dataTypeId, sql`${t.createdAt} desc`, t.id),
    index("files_owner_idx").on(t.ownerId, sql`${t.createdAt} desc`, t.id),
    index("files_owner_status_idx").on(t.ownerId, t.status, sql`${t.createdAt} desc`, t.id),
  ],
);

/** A resumable multipart upload of a file through the Worker; its parts are tracked in upload_parts. */
export const fileUploads = sqliteTable(
  "file_uploads",
  {
    id: text("id").primaryKey(),
    fileId: text("file_id").notNull(),
    r2UploadId: text("r2_upload_id").notNull(),
    r2Key: text("r2_key").notNull(),
    partSize: integer("part_size").notNull(),
    ownerId: text("owner_id").notNull(),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
  },
  (t) => [index("file_uploads_expiry_idx").on(t.expiresAt), uniqueIndex("file_uploads_file_uq").on(t.fileId)],
);

export const uploadParts = sqliteTable(
  "upload_parts",
  {
    uploadId: text("upload_id")
      .notNull()
      .references(() => fileUploads.id, { onDelete: "cascade" }),
    partNumber: integer("part_number").notNull(),
    etag: text("etag").notNull(),
    size: integer("size").notNull(),
    /** SHA-256 (hex) of the part's bytes, computed while the part streamed to R2. */
    checksum: text("checksum"),
    uploadedAt: text("uploaded_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.uploadId, t.partNumber] })],
);

// ---------------------------------------------------------------------------------------------
// Work management (spec 2.3, 2.4, 2.5, section 3 revisions). Object owners and other people are
// stored as (id, name) pairs; statuses are a system status name or a user status id.
// ---------------------------------------------------------------------------------------------

/**
 * The asset catalogue that deviations, activities and work items designate: organizations, plants,
 * main systems, equipment and design objects, linked to their parent. `plant_id` is the plant the
 * asset belongs to (itself for a plant, null for an organization); the parent never changes, so it
 * stays true.
 */
export const assets = sqliteTable(
  "assets",
  {
    id: text("id").primaryKey(),
    kind: text("kind").notNull(),
    name: text("name").notNull(),
    /** The name for uniqueness and case-insensitive lookups: NFC, Unicode case-folded (src/pkg/unicode.ts nameKey). */
    nameKey: text("name_key"),
    parentId: text("parent_id").references((): AnySQLiteColumn => assets.id),
    plantId: text("plant_id"),
    metadata: text("metadata"),
    ...audit,
  },
  (t) => [
    index("assets_kind_name_idx").on(t.kind, t.nameKey),
    index("assets_parent_idx").on(t.parentId),
    uniqueIndex("assets_plant_name_uq")
      .on(t.nameKey)
      .where(sql`${t.kind} = 'plant'`),
  ],
);

/**
 * Which assets an entity designates (entity_kind deviation, activity or workItem). Designating an
 * asset also stores a derived row for its plant (derived = 1), so the plantNames filter is one
 * index lookup like the others.
 */
export const designations = sqliteTable(
  "designations",
  {
    entityKind: text("entity_kind").notNull(),
    entityId: text("entity_id").notNull(),
    assetKind: text("asset_kind").notNull(),
    assetId: text("asset_id")
      .notNull()
      .references(() => assets.id),
    derived: integer("derived", { mode: "boolean" }).notNull().default(false),
  },
  (t) => [
    primaryKey({ columns: [t.entityKind, t.entityId, t.assetKind, t.assetId] }),
    index("designations_asset_idx").on(t.entityKind, t.assetKind, t.assetId, t.entityId),
    index("designations_asset_id_idx").on(t.assetId),
  ],
);

/** Tags of work items and the latest revision of work templates, one row per tag, for filters and GET /Tags. */
export const entityTags = sqliteTable(
  "entity_tags",
  {
    entityKind: text("entity_kind").notNull(),
    entityId: text("entity_id").notNull(),
    tag: text("tag").notNull(),
  },
  (t) => [primaryKey({ columns: [t.entityKind, t.entityId, t.tag] }), index("entity_tags_tag_idx").on(t.tag, t.entityKind, t.entityId)],
);

const owned = {
  ownerId: text("owner_id").notNull(),
  ownerName: text("owner_name"),
};

/** Deviations (spec 2.3). The type is an entity type (General by default); properties live in property_values. */
export const deviations = sqliteTable(
  "deviations",
  {
    id: text("id").primaryKey(),
    referenceId: text("reference_id").notNull(),
    /** reference_id for uniqueness: NFC, Unicode case-folded (src/pkg/unicode.ts nameKey). */
    referenceKey: text("reference_key"),
    description: text("description"),
    status: text("status").notNull(),
    typeId: text("type_id")
      .notNull()
      .references(() => entityTypes.id),
    ...owned,
    riskId: text("risk_id"),
    riskName: text("risk_name"),
    metadata: text("metadata"),
    /**
     * Where the deviation comes from: NULL for one made through the API (an inspection), or the
     * monitor that raised it (issue 25). `origin` is the JSON the API shows (monitor, controller,
     * monitor job, alarm); `origin_monitor_ref` the monitor, for the trigger guard and filters.
     */
    origin: text("origin"),
    originMonitorRef: text("origin_monitor_ref"),
    ...audit,
  },
  (t) => [
    uniqueIndex("deviations_reference_uq").on(t.referenceKey),
    index("deviations_origin_monitor_idx").on(t.originMonitorRef),
    index("deviations_reference_idx").on(t.referenceId, t.id),
    // The list's default order is createdAt desc, id: each filter's index ends with it, so a
    // filtered first page is read in order and stops at the page (docs/decisions.md, "List queries").
    index("deviations_status_idx").on(t.status, sql`${t.createdAt} desc`, t.id),
    index("deviations_type_idx").on(t.typeId, sql`${t.createdAt} desc`, t.id),
    index("deviations_owner_idx").on(t.ownerId, sql`${t.createdAt} desc`, t.id),
    index("deviations_owner_status_idx").on(t.ownerId, t.status, sql`${t.createdAt} desc`, t.id),
    index("deviations_risk_idx").on(t.riskId, sql`${t.createdAt} desc`, t.id),
    index("deviations_created_idx").on(sql`${t.createdAt} desc`, t.id),
  ],
);

/** Relationships between deviations; symmetric, stored in both directions. */
export const deviationRelationships = sqliteTable(
  "deviation_relationships",
  {
    deviationId: text("deviation_id")
      .notNull()
      .references(() => deviations.id),
    relatedId: text("related_id")
      .notNull()
      .references(() => deviations.id),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.deviationId, t.relatedId] }), index("deviation_relationships_related_idx").on(t.relatedId)],
);

/** Links between deviations and work items. */
export const deviationWorkItems = sqliteTable(
  "deviation_work_items",
  {
    deviationId: text("deviation_id")
      .notNull()
      .references(() => deviations.id),
    workItemId: text("work_item_id")
      .notNull()
      .references(() => workItems.id),
    createdAt: text("created_at").notNull(),
    createdBy: text("created_by"),
  },
  (t) => [
    primaryKey({ columns: [t.deviationId, t.workItemId] }),
    index("deviation_work_items_work_item_idx").on(t.workItemId, t.deviationId),
  ],
);

/** Activity types (the `type` of activity templates and activities). */
export const activityTypes = sqliteTable(
  "activity_types",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    /** The name for uniqueness and case-insensitive lookups: NFC, Unicode case-folded (src/pkg/unicode.ts nameKey). */
    nameKey: text("name_key"),
    description: text("description"),
    ...audit,
  },
  (t) => [uniqueIndex("activity_types_name_uq").on(t.nameKey)],
);

/**
 * Work templates, one row per revision (spec 2.4, section 3). `is_latest` marks the revision reads
 * return. Properties of the latest revision live in property_values (entity_kind workTemplate, entity
 * id = template id); every revision also keeps its resolved properties in `properties` (JSON), so a
 * frozen revision reads back exactly.
 */
export const workTemplates = sqliteTable(
  "work_templates",
  {
    id: text("id").notNull(),
    revision: integer("revision").notNull(),
    isLatest: integer("is_latest", { mode: "boolean" }).notNull(),
    displayName: text("display_name").notNull(),
    referenceId: text("reference_id"),
    status: text("status").notNull(),
    typeId: text("type_id")
      .notNull()
      .references(() => entityTypes.id),
    ...owned,
    tags: text("tags").notNull(),
    properties: text("properties").notNull(),
    metadata: text("metadata"),
    ...audit,
  },
  (t) => [
    primaryKey({ columns: [t.id, t.revision] }),
    uniqueIndex("work_templates_latest_uq")
      .on(t.id)
      .where(sql`${t.isLatest} = 1`),
    // Lists show latest revisions only: partial indexes over them. Without statistics SQLite takes
    // an equality on is_latest for a selective one (about ten rows) and walked an index led by it
    // rather than the few templates a selective filter names (docs/decisions.md, "List queries").
    index("work_templates_latest_name_idx")
      .on(sql`lower(${t.displayName})`, t.id)
      .where(sql`${t.isLatest} = 1`),
    index("work_templates_latest_status_idx")
      .on(t.status, sql`lower(${t.displayName})`, t.id)
      .where(sql`${t.isLatest} = 1`),
    index("work_templates_latest_owner_idx")
      .on(t.ownerId, sql`lower(${t.displayName})`, t.id)
      .where(sql`${t.isLatest} = 1`),
    index("work_templates_latest_owner_status_idx")
      .on(t.ownerId, t.status, sql`lower(${t.displayName})`, t.id)
      .where(sql`${t.isLatest} = 1`),
  ],
);

/** SectionTemplate: a dependent of a work template revision; its id is kept when a revision is copied. */
export const sectionTemplates = sqliteTable(
  "section_templates",
  {
    workTemplateId: text("work_template_id").notNull(),
    workTemplateRevision: integer("work_template_revision").notNull(),
    id: text("id").notNull(),
    displayName: text("display_name").notNull(),
    description: text("description"),
    position: integer("position").notNull(),
    metadata: text("metadata"),
  },
  (t) => [
    primaryKey({ columns: [t.workTemplateId, t.workTemplateRevision, t.id] }),
    foreignKey({ columns: [t.workTemplateId, t.workTemplateRevision], foreignColumns: [workTemplates.id, workTemplates.revision] }),
  ],
);

/**
 * WorkTemplateActivityTemplate: an activity template used by a work template revision (optionally in
 * a section). It names the activity template by id; a work item instantiates its latest revision.
 */
export const workTemplateActivityTemplates = sqliteTable(
  "work_template_activity_templates",
  {
    workTemplateId: text("work_template_id").notNull(),
    workTemplateRevision: integer("work_template_revision").notNull(),
    id: text("id").notNull(),
    activityTemplateId: text("activity_template_id").notNull(),
    sectionTemplateId: text("section_template_id"),
    position: integer("position").notNull(),
    metadata: text("metadata"),
  },
  (t) => [
    primaryKey({ columns: [t.workTemplateId, t.workTemplateRevision, t.id] }),
    foreignKey({ columns: [t.workTemplateId, t.workTemplateRevision], foreignColumns: [workTemplates.id, workTemplates.revision] }),
    index("wtat_activity_template_idx").on(t.activityTemplateId),
  ],
);

/** Activity templates, one row per revision, as work templates. */
export const activityTemplates = sqliteTable(
  "activity_templates",
  {
    id: text("id").notNull(),
    revision: integer("revision").notNull(),
    isLatest: integer("is_latest", { mode: "boolean" }).notNull(),
    displayName: text("display_name").notNull(),
    referenceId: text("reference_id"),
    status: text("status").notNull(),
    ...owned,
    activityTypeId: text("activity_type_id").references(() => activityTypes.id),
    templateType: text("template_type"),
    description: text("description"),
    metadata: text("metadata"),
    ...audit,
  },
  (t) => [
    primaryKey({ columns: [t.id, t.revision] }),
    uniqueIndex("activity_templates_latest_uq")
      .on(t.id)
      .where(sql`${t.isLatest} = 1`),
    // Partial indexes over the latest revisions, as for work templates.
    index("activity_templates_latest_name_idx")
      .on(sql`lower(${t.displayName})`, t.id)
      .where(sql`${t.isLatest} = 1`),
    index("activity_templates_latest_status_idx")
      .on(t.status, sql`lower(${t.displayName})`, t.id)
      .where(sql`${t.isLatest} = 1`),
    index("activity_templates_latest_type_idx")
      .on(t.activityTypeId, sql`lower(${t.displayName})`, t.id)
      .where(sql`${t.isLatest} = 1`),
    index("activity_templates_latest_owner_idx")
      .on(t.ownerId, sql`lower(${t.displayName})`, t.id)
      .where(sql`${t.isLatest} = 1`),
    index("activity_templates_latest_owner_status_idx")
      .on(t.ownerId, t.status, sql`lower(${t.displayName})`, t.id)
      .where(sql`${t.isLatest} = 1`),
    index("activity_templates_latest_template_type_idx")
      .on(t.templateType, sql`lower(${t.displayName})`, t.id)
      .where(sql`${t.isLatest} = 1`),
    index("activity_templates_activity_type_idx").on(t.activityTypeId),
  ],
);

/** InputTemplate: a dependent of an activity template revision (an input to fill in on each activity). */
export const inputTemplates = sqliteTable(
  "input_templates",
  {
    activityTemplateId: text("activity_template_id").notNull(),
    activityTemplateRevision: integer("activity_template_revision").notNull(),
    id: text("id").notNull(),
    name: text("name").notNull(),
    displayName: text("display_name"),
    format: text("format").notNull(),
    required: integer("required", { mode: "boolean" }).notNull().default(false),
    position: integer("position").notNull(),
    metadata: text("metadata"),
    /**
     * The channel its values feed (issue 35), as JSON `{ channelId | channelTypeId, unit }`, or null:
     * src/measurements/feed/targets.ts checks it at save, src/measurements/feed/reconcile.ts feeds it.
     */
    reading: text("reading"),
  },
  (t) => [
    primaryKey({ columns: [t.activityTemplateId, t.activityTemplateRevision, t.id] }),
    foreignKey({
      columns: [t.activityTemplateId, t.activityTemplateRevision],
      foreignColumns: [activityTemplates.id, activityTemplates.revision],
    }),
  ],
);

/** Work items (spec 2.4). Properties in property_values (entity_kind workItem); tags also in entity_tags. */
export const workItems = sqliteTable(
  "work_items",
  {
    id: text("id").primaryKey(),
    displayName: text("display_name").notNull(),
    referenceId: text("reference_id"),
    status: text("status").notNull(),
    dueDate: text("due_date"),
    typeId: text("type_id")
      .notNull()
      .references(() => entityTypes.id),
    ...owned,
    tags: text("tags").notNull(),
    metadata: text("metadata"),
    ...audit,
  },
  (t) => [
    // Default order displayName (binary), id: each filter's index ends with it (see deviations).
    // due_date last: a page that walks these checks a due date range from the index, not the row.
    index("work_items_name_idx").on(t.displayName, t.id, t.dueDate),
    index("work_items_status_idx").on(t.status, t.displayName, t.id, t.dueDate),
    index("work_items_due_idx").on(t.dueDate, t.id),
    index("work_items_owner_idx").on(t.ownerId, t.displayName, t.id),
    index("work_items_owner_status_idx").on(t.ownerId, t.status, t.displayName, t.id),
    index("work_items_created_idx").on(t.createdAt, t.id),
    // The overdue scan's third range (src/plans/overdue.ts): items changed since its last read, whose
    // due date a planner may have moved into the past.
    index("work_items_updated_idx").on(t.updatedAt, t.id),
  ],
);

/** basedOn of a work item: the work template revisions it instantiated (which freezes them). */
export const workItemTemplates = sqliteTable(
  "work_item_templates",
  {
    workItemId: text("work_item_id")
      .notNull()
      .references(() => workItems.id),
    workTemplateId: text("work_template_id").notNull(),
    workTemplateRevision: integer("work_template_revision").notNull(),
    position: integer("position").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.workItemId, t.workTemplateId] }),
    index("work_item_templates_template_idx").on(t.workTemplateId, t.workTemplateRevision, t.workItemId),
  ],
);

/** The activity template revision a work item used first; later activities of that template use it too. */
export const workItemActivityTemplates = sqliteTable(
  "work_item_activity_templates",
  {
    workItemId: text("work_item_id")
      .notNull()
      .references(() => workItems.id),
    activityTemplateId: text("activity_template_id").notNull(),
    activityTemplateRevision: integer("activity_template_revision").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.workItemId, t.activityTemplateId] }),
    index("work_item_activity_templates_template_idx").on(t.activityTemplateId, t.activityTemplateRevision),
  ],
);

/** Activities (spec 2.4), created from an activity template revision, usually within a work item. */
export const activities = sqliteTable(
  "activities",
  {
    id: text("id").primaryKey(),
    workItemId: text("work_item_id").references(() => workItems.id),
    basedOnId: text("based_on_id").notNull(),
    basedOnRevision: integer("based_on_revision").notNull(),
    displayName: text("display_name").notNull(),
    referenceId: text("reference_id"),
    status: text("status").notNull(),
    dateOfActivity: text("date_of_activity"),
    ...owned,
    responsibleId: text("responsible_id"),
    responsibleName: text("responsible_name"),
    activityTypeId: text("activity_type_id").references(() => activityTypes.id),
    position: integer("position").notNull().default(0),
    metadata: text("metadata"),
    ...audit,
  },
  (t) => [
    index("activities_based_on_idx").on(t.basedOnId, t.basedOnRevision, t.id),
    index("activities_work_item_idx").on(t.workItemId, t.position),
    // Default order displayName (binary), id: each filter's index ends with it (see deviations).
    // date_of_activity last: a page that walks these checks a date range from the index, not the row.
    index("activities_name_idx").on(t.displayName, t.id, t.dateOfActivity),
    index("activities_status_idx").on(t.status, t.displayName, t.id, t.dateOfActivity),
    index("activities_date_idx").on(t.dateOfActivity, t.id),
    index("activities_owner_idx").on(t.ownerId, t.displayName, t.id),
    index("activities_owner_status_idx").on(t.ownerId, t.status, t.displayName, t.id),
    index("activities_responsible_idx").on(t.responsibleId, t.displayName, t.id),
    index("activities_type_idx").on(t.activityTypeId, t.displayName, t.id),
  ],
);

/** The inputs of an activity, instantiated from the input templates of its revision. */
export const activityInputs = sqliteTable(
  "activity_inputs",
  {
    activityId: text("activity_id")
      .notNull()
      .references(() => activities.id, { onDelete: "cascade" }),
    inputTemplateId: text("input_template_id").notNull(),
    name: text("name").notNull(),
    displayName: text("display_name"),
    format: text("format").notNull(),
    required: integer("required", { mode: "boolean" }).notNull().default(false),
    position: integer("position").notNull(),
    value: text("value"),
  },
  (t) => [primaryKey({ columns: [t.activityId, t.inputTemplateId] })],
);

/**
 * File references (spec 2.5) of work items and work templates (owner_kind workItem or workTemplate).
 * A work template's references belong to the template id, not to one revision.
 */
export const fileReferences = sqliteTable(
  "file_references",
  {
    id: text("id").primaryKey(),
    ownerKind: text("owner_kind").notNull(),
    ownerId: text("owner_id").notNull(),
    location: text("location").notNull(),
    platformFileId: text("platform_file_id"),
    url: text("url"),
    name: text("name"),
    /** For a work item's reference inherited from a template: the template's reference it copies. */
    inheritedFrom: text("inherited_from"),
    createdAt: text("created_at").notNull(),
    createdBy: text("created_by"),
  },
  (t) => [
    index("file_references_owner_idx").on(t.ownerKind, t.ownerId, t.createdAt),
    index("file_references_platform_file_idx").on(t.platformFileId),
  ],
);

// --- Schedules (the minute dispatcher, src/pkg/schedule) ---

/**
 * One row per schedule of any area (kind `job-config`, `monitor`, `search-index`...), owned by the
 * area's row `owner_id`. The dispatcher finds due rows through `schedules_due_idx` and claims them
 * with a lease; `rule` is the canonical JSON of a ScheduleRule (cron, timeZone, startAt).
 */
export const schedules = sqliteTable(
  "schedules",
  {
    kind: text("kind").notNull(),
    ownerId: text("owner_id").notNull(),
    rule: text("rule").notNull(),
    /** ISO 8601 UTC of the pending occurrence; null when the rule has no further run. */
    nextRunAt: text("next_run_at"),
    leaseToken: text("lease_token"),
    leaseUntil: text("lease_until"),
    /** Failed starts of the pending occurrence. */
    attempts: integer("attempts").notNull().default(0),
    lastRunAt: text("last_run_at"),
    lastRunKey: text("last_run_key"),
    lastError: text("last_error"),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.kind, t.ownerId] }),
    index("schedules_due_idx")
      .on(t.nextRunAt)
      .where(sql`${t.nextRunAt} IS NOT NULL`),
  ],
);

/**
 * Data processing (src/dataprocessing). A job config names an image of the container host and how
 * to run it; its run options are one AES-GCM blob (`run_options_enc`, `v{keyVersion}.{iv}.{data}`),
 * never plain text. The weekly frequency is kept as a `schedules` row of kind `job-config`.
 */
export const jobConfigurations = sqliteTable(
  "job_configurations",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    /** The name for uniqueness and case-insensitive lookups: NFC, Unicode case-folded (src/pkg/unicode.ts nameKey). */
    nameKey: text("name_key"),
    description: text("description"),
    imageName: text("image_name").notNull(),
    imageTag: text("image_tag").notNull(),
    cpuCores: real("cpu_cores").notNull(),
    memoryGb: real("memory_gb").notNull(),
    gpuCores: real("gpu_cores"),
    gpuSku: text("gpu_sku"),
    runOptionsEnc: text("run_options_enc").notNull(),
    runCommand: text("run_command"),
    nextConfigId: text("next_config_id"),
    /** JSON { dayOfWeek, hour, startDate } or null. */
    frequency: text("frequency"),
    timeZone: text("time_zone"),
    outputTypeId: text("output_type_id"),
    timeoutMinutes: integer("timeout_minutes").notNull(),
    objectOwnerId: text("object_owner_id").notNull(),
    objectOwnerName: text("object_owner_name"),
    ...audit,
  },
  (t) => [
    uniqueIndex("job_configurations_name_uq").on(t.nameKey),
    index("job_configurations_next_idx").on(t.nextConfigId),
    // Default order lower(name), id, alone and by owner (see deviations).
    index("job_configurations_name_idx").on(sql`lower(${t.name})`, t.id),
    index("job_configurations_owner_idx").on(t.objectOwnerId, sql`lower(${t.name})`, t.id),
  ],
);

/** Output types: a name and an optional JSON Schema (null: unstructured outputs). */
export const outputTypes = sqliteTable(
  "output_types",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    /** The name for uniqueness and case-insensitive lookups: NFC, Unicode case-folded (src/pkg/unicode.ts nameKey). */
    nameKey: text("name_key"),
    schema: text("schema"),
    ...audit,
  },
  (t) => [uniqueIndex("output_types_name_uq").on(t.nameKey)],
);

/**
 * Jobs: one row per run of a config (or per ad-hoc run). Jobs of one chain share `chain_id` and are
 * ordered by `chain_position`; the JobRunner Durable Object of the chain drives them. `run_key` is the
 * schedule occurrence that created the chain (unique, so a doubled tick creates one chain).
 */
export const jobs = sqliteTable(
  "jobs",
  {
    id: text("id").primaryKey(),
    configurationId: text("configuration_id"),
    chainId: text("chain_id").notNull(),
    chainPosition: integer("chain_position").notNull(),
    status: text("status").notNull(),
    errorMessage: text("error_message"),
    output: text("output"),
    outputTruncated: integer("output_truncated", { mode: "boolean" }).notNull().default(false),
    /** Everything the run needs (image, resources, command, timeout), without the environment. */
    spec: text("spec").notNull(),
    /** The run options of this job (AES-GCM, as configs), including the body's for the first of a chain. */
    runOptionsEnc: text("run_options_enc").notNull(),
    runKey: text("run_key"),
    endHookKind: text("end_hook_kind"),
    endHookRef: text("end_hook_ref"),
    outputRejections: text("output_rejections"),
    startedAt: text("started_at"),
    endedAt: text("ended_at"),
    deadlineAt: text("deadline_at"),
    hostUnreachableSince: text("host_unreachable_since"),
    /** Who cancelled the job (POST /Jobs/{id}/Cancellation) and when; null for every other end. */
    cancelledById: text("cancelled_by_id"),
    cancelledByName: text("cancelled_by_name"),
    cancelledAt: text("cancelled_at"),
    objectOwnerId: text("object_owner_id").notNull(),
    objectOwnerName: text("object_owner_name"),
    ...audit,
  },
  (t) => [
    uniqueIndex("jobs_run_key_uq").on(t.runKey),
    index("jobs_chain_idx").on(t.chainId, t.chainPosition),
    // Default order createdAt desc, chainPosition, id: each filter's index ends with it (see deviations).
    index("jobs_config_idx").on(t.configurationId, sql`${t.createdAt} desc`, t.chainPosition, t.id),
    index("jobs_active_idx")
      .on(t.status)
      .where(sql`${t.status} IN ('Started', 'InProgress')`),
    index("jobs_status_idx").on(t.status, sql`${t.createdAt} desc`, t.chainPosition, t.id),
    index("jobs_created_idx").on(sql`${t.createdAt} desc`, t.chainPosition, t.id),
  ],
);

/** Structured outputs a job posted, each valid against its output type's schema (rule 6). */
export const jobOutputs = sqliteTable(
  "job_outputs",
  {
    id: text("id").primaryKey(),
    jobId: text("job_id")
      .notNull()
      .references(() => jobs.id, { onDelete: "cascade" }),
    jobOutputTypeId: text("job_output_type_id"),
    output: text("output").notNull(),
    ...audit,
  },
  (t) => [index("job_outputs_job_idx").on(t.jobId, t.createdAt)],
);

/**
 * Models and monitors (src/monitors). Model definitions are images by name and version; models and
 * monitors get readable numbers (MOD-n, MON-n) from `counters`. Populations and their items belong
 * to a model or, copied on creation, to a monitor (`owner_kind`). A monitor's resource columns are
 * null when inherited from its model. Monitor jobs run a data processing job (ACR) or wait for an
 * external system (External).
 */
export const counters = sqliteTable("counters", {
  name: text("name").primaryKey(),
  value: integer("value").notNull(),
});

export const modelDefinitions = sqliteTable(
  "model_definitions",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    /** The name for uniqueness and case-insensitive lookups: NFC, Unicode case-folded (src/pkg/unicode.ts nameKey). */
    nameKey: text("name_key"),
    version: text("version").notNull(),
    location: text("location").notNull(),
    uri: text("uri"),
    ...audit,
  },
  (t) => [uniqueIndex("model_definitions_name_version_uq").on(t.nameKey, t.version)],
);

export const models = sqliteTable(
  "models",
  {
    id: text("id").primaryKey(),
    modelId: text("model_id").notNull(),
    name: text("name").notNull(),
    description: text("description"),
    definitionName: text("definition_name").notNull(),
    definitionVersion: text("definition_version").notNull(),
    status: text("status").notNull(),
    cpuCores: real("cpu_cores").notNull(),
    memoryGb: real("memory_gb").notNull(),
    gpuCores: real("gpu_cores"),
    gpuSku: text("gpu_sku"),
    configurableParameters: text("configurable_parameters").notNull(),
    staticParameters: text("static_parameters").notNull(),
    /** The entity type whose linked property definitions (application rule Model) the model's properties follow. */
    typeId: text("type_id").notNull(),
    ownerId: text("owner_id").notNull(),
    ownerName: text("owner_name"),
    ...audit,
  },
  (t) => [
    uniqueIndex("models_model_id_uq").on(t.modelId),
    index("models_definition_idx").on(sql`lower(${t.definitionName})`, t.definitionVersion),
    // Default order createdAt desc, id: each filter's index ends with it (see deviations).
    index("models_created_idx").on(sql`${t.createdAt} desc`, t.id),
    index("models_status_idx").on(t.status, sql`${t.createdAt} desc`, t.id),
    index("models_owner_idx").on(t.ownerId, sql`${t.createdAt} desc`, t.id),
    index("models_owner_status_idx").on(t.ownerId, t.status, sql`${t.createdAt} desc`, t.id),
    index("models_definition_name_idx").on(t.definitionName, sql`${t.createdAt} desc`, t.id),
  ],
);

export const populations = sqliteTable(
  "populations",
  {
    id: text("id").primaryKey(),
    ownerKind: text("owner_kind").notNull(),
    ownerId: text("owner_id").notNull(),
    name: text("name").notNull(),
    description: text("description"),
    assetType: text("asset_type").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [index("populations_owner_idx").on(t.ownerKind, t.ownerId)],
);

export const populationItems = sqliteTable(
  "population_items",
  {
    id: text("id").primaryKey(),
    populationId: text("population_id")
      .notNull()
      .references(() => populations.id, { onDelete: "cascade" }),
    assetId: text("asset_id").notNull(),
    assetName: text("asset_name"),
    criticality: real("criticality"),
    lastMonitorJobId: text("last_monitor_job_id"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [uniqueIndex("population_items_asset_uq").on(t.populationId, t.assetId), index("population_items_asset_idx").on(t.assetId)],
);

export const monitors = sqliteTable(
  "monitors",
  {
    id: text("id").primaryKey(),
    monitorId: text("monitor_id").notNull(),
    name: text("name").notNull(),
    modelRef: text("model_ref")
      .notNull()
      .references(() => models.id),
    status: text("status").notNull(),
    triggerSchedule: text("trigger_schedule"),
    timeZone: text("time_zone"),
    triggerEvent: text("trigger_event"),
    instructions: text("instructions"),
    cpuCores: real("cpu_cores"),
    memoryGb: real("memory_gb"),
    gpuCores: real("gpu_cores"),
    gpuSku: text("gpu_sku"),
    configurableParameters: text("configurable_parameters"),
    controllers: text("controllers").notNull(),
    ownerId: text("owner_id").notNull(),
    ownerName: text("owner_name"),
    /** The longest a person may shelve one of this monitor's alarms, in minutes (issue 33). */
    maxShelveMinutes: integer("max_shelve_minutes").notNull().default(480),
    ...audit,
  },
  (t) => [
    uniqueIndex("monitors_monitor_id_uq").on(t.monitorId),
    // Default order createdAt desc, id: each filter's index ends with it (see deviations).
    index("monitors_model_idx").on(t.modelRef, sql`${t.createdAt} desc`, t.id),
    index("monitors_created_idx").on(sql`${t.createdAt} desc`, t.id),
    index("monitors_status_idx").on(t.status, sql`${t.createdAt} desc`, t.id),
    index("monitors_owner_idx").on(t.ownerId, sql`${t.createdAt} desc`, t.id),
    index("monitors_owner_status_idx").on(t.ownerId, t.status, sql`${t.createdAt} desc`, t.id),
  ],
);

export const monitorJobs = sqliteTable(
  "monitor_jobs",
  {
    id: text("id").primaryKey(),
    monitorRef: text("monitor_ref")
      .notNull()
      .references(() => monitors.id, { onDelete: "cascade" }),
    jobId: text("job_id"),
    status: text("status").notNull(),
    errorMessage: text("error_message"),
    output: text("output"),
    definitionName: text("definition_name").notNull(),
    definitionVersion: text("definition_version").notNull(),
    location: text("location").notNull(),
    parameters: text("parameters").notNull(),
    trigger: text("trigger_kind").notNull(),
    runKey: text("run_key"),
    deadlineAt: text("deadline_at").notNull(),
    createdAt: text("created_at").notNull(),
    completedAt: text("completed_at"),
    updatedAt: text("updated_at").notNull(),
    /** How many event-triggered runs led to this one (0: schedule or on demand); bounds monitors feeding each other. */
    triggerDepth: integer("trigger_depth").notNull().default(0),
    /** What the model reported ({ criticality, variables }), kept so a retried evaluation sees the same values. */
    reports: text("reports"),
    /** When the controllers were evaluated for this (Succeeded) job; NULL until then, so a retry evaluates again. */
    evaluatedAt: text("evaluated_at"),
  },
  (t) => [
    uniqueIndex("monitor_jobs_run_key_uq").on(t.runKey),
    index("monitor_jobs_monitor_idx").on(t.monitorRef, t.createdAt),
    index("monitor_jobs_job_idx").on(t.jobId),
    // GET /MonitorJobs without monitorIds: the newest 500 in order, not a sort of every job.
    index("monitor_jobs_created_idx").on(t.createdAt),
  ],
);

/** Every criticality a monitor job reported for a population item, for its trend. */
export const criticalityHistory = sqliteTable(
  "criticality_history",
  {
    id: text("id").primaryKey(),
    itemId: text("item_id")
      .notNull()
      .references(() => populationItems.id, { onDelete: "cascade" }),
    monitorJobId: text("monitor_job_id").notNull(),
    criticality: real("criticality").notNull(),
    recordedAt: text("recorded_at").notNull(),
  },
  (t) => [
    index("criticality_history_item_idx").on(t.itemId, t.recordedAt),
    uniqueIndex("criticality_history_job_uq").on(t.itemId, t.monitorJobId),
  ],
);

/**
 * Alarms (issue 25): one row per episode of a controller holding for a population item, from the
 * monitor job that entered it to the one that left it. `active_key` (`{item}:{controller}`) is set
 * while the alarm is active and NULL after: unique, so a redelivered job end, a retried evaluation or
 * two overlapping jobs can never enter the same alarm twice (NULLs do not collide).
 *
 * Since issue 33 an alarm is also a resource people work (GET /Alarms): its severity, acknowledgement,
 * assignee, shelving and escalation, versioned by `etag`. Acknowledgement is separate from the state:
 * an alarm that cleared unacknowledged stays on the board until someone acknowledges it.
 */
export const monitorAlarms = sqliteTable(
  "monitor_alarms",
  {
    id: text("id").primaryKey(),
    /**
     * What raised it (issue 35): `monitor` (monitor_ref a monitor, item_id a population item) or
     * `channel` (both the channel's id: a channel is its own one item). No foreign keys since migration
     * 0020: triggers delete the alarms of a deleted monitor, population item or channel, as the cascades did.
     */
    sourceKind: text("source_kind").notNull().default("monitor"),
    monitorRef: text("monitor_ref").notNull(),
    itemId: text("item_id").notNull(),
    assetId: text("asset_id").notNull(),
    /** The asset's plant (the asset itself for a plant; NULL for an organization), for the board's plant filter. */
    plantId: text("plant_id"),
    controller: text("controller").notNull(),
    /** ISA-18.2 priority, from the controller when the alarm was entered: critical, high, medium or low. */
    severity: text("severity").notNull().default("medium"),
    activeKey: text("active_key"),
    enteredJobId: text("entered_job_id").notNull(),
    enteredAt: text("entered_at").notNull(),
    enteredValues: text("entered_values").notNull(),
    leftJobId: text("left_job_id"),
    leftAt: text("left_at"),
    leftValues: text("left_values"),
    deviationId: text("deviation_id"),
    /** The status the alarm raised its deviation with: onLeave changes the deviation only while it still has it. */
    deviationStatus: text("deviation_status"),
    workItemId: text("work_item_id"),
    /** Entered while its controller and item were shelved: its actions and notifications wait for the shelving to end. */
    held: integer("held", { mode: "boolean" }).notNull().default(false),
    acknowledgedAt: text("acknowledged_at"),
    acknowledgedById: text("acknowledged_by_id"),
    acknowledgedByName: text("acknowledged_by_name"),
    acknowledgedComment: text("acknowledged_comment"),
    assigneeId: text("assignee_id"),
    assigneeName: text("assignee_name"),
    assignedAt: text("assigned_at"),
    /** `timed` (until shelved_until) or `oneShot` (until the alarm clears, at most until shelved_until); NULL: not shelved. */
    shelveMode: text("shelve_mode"),
    shelvedAt: text("shelved_at"),
    shelvedUntil: text("shelved_until"),
    shelvedById: text("shelved_by_id"),
    shelvedByName: text("shelved_by_name"),
    shelveComment: text("shelve_comment"),
    /** When the next `escalated` event is due; NULL once acknowledged or cleared, or without escalation. */
    escalateAt: text("escalate_at"),
    escalations: integer("escalations").notNull().default(0),
    escalateAfterMinutes: integer("escalate_after_minutes"),
    escalateEveryMinutes: integer("escalate_every_minutes"),
    etag: text("etag").notNull().default(""),
    updatedAt: text("updated_at").notNull().default(""),
  },
  (t) => [
    uniqueIndex("monitor_alarms_active_uq").on(t.activeKey),
    index("monitor_alarms_monitor_idx").on(t.monitorRef, t.activeKey),
    index("monitor_alarms_item_idx").on(t.itemId, t.enteredAt),
    // The minute dispatcher's alarm timers: shelvings that expire and escalations that are due, each a range scan.
    index("monitor_alarms_shelved_idx").on(t.shelvedUntil),
    index("monitor_alarms_escalate_idx").on(t.escalateAt),
    index("monitor_alarms_entered_idx").on(t.enteredAt),
  ],
);

/**
 * The history of alarms: each entry and exit with its job and the values that decided it (issue 25),
 * and since issue 33 what people and the clock did to it (acknowledged, assigned, unassigned,
 * commented, shelved, unshelved, escalated, released, onLeaveSkipped) with who, when and a comment.
 */
export const monitorAlarmEvents = sqliteTable(
  "monitor_alarm_events",
  {
    id: text("id").primaryKey(),
    alarmId: text("alarm_id")
      .notNull()
      .references(() => monitorAlarms.id, { onDelete: "cascade" }),
    monitorRef: text("monitor_ref").notNull(),
    itemId: text("item_id").notNull(),
    controller: text("controller").notNull(),
    action: text("action").notNull(),
    /** The monitor job of an entry or exit (NULL for what people and the clock do). */
    monitorJobId: text("monitor_job_id"),
    /** An entry's or exit's conditions with the values seen ([{ variableName, operator, comparisonValue, value, holds }]). */
    conditions: text("conditions"),
    /** Who did it: NULL for the monitoring loop and the clock. */
    actorId: text("actor_id"),
    actorName: text("actor_name"),
    comment: text("comment"),
    /** What the action set, as JSON: the assignee, the shelving, the escalation's number. */
    details: text("details"),
    recordedAt: text("recorded_at").notNull(),
  },
  (t) => [
    // An alarm is entered, left and released at most once; the rest may repeat.
    uniqueIndex("monitor_alarm_events_action_uq")
      .on(t.alarmId, t.action)
      .where(sql`${t.action} IN ('entered', 'left', 'released')`),
    index("monitor_alarm_events_item_idx").on(t.itemId, t.recordedAt),
    index("monitor_alarm_events_alarm_idx").on(t.alarmId, t.recordedAt),
  ],
);

/**
 * Chattering (issue 33): consecutive evaluations of a controller for an item that have not changed its
 * alarm yet. `enter`: holding, not yet `pendingFor` times; `leave`: an active alarm not holding, not yet
 * `clearAfter` times. A row exists only while such a streak runs, so a job that changes nothing writes none.
 */
export const monitorAlarmStreaks = sqliteTable(
  "monitor_alarm_streaks",
  {
    /** `{item}:{controller}`, as an active alarm's key. */
    key: text("key").primaryKey(),
    /** The monitor or channel (as monitor_alarms.monitor_ref); triggers delete the streaks of a deleted one. */
    monitorRef: text("monitor_ref").notNull(),
    itemId: text("item_id").notNull(),
    direction: text("direction").notNull(),
    count: integer("count").notNull(),
    /** The last monitor job counted: an evaluation run again for the same job counts it once. */
    jobId: text("job_id").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("monitor_alarm_streaks_monitor_idx").on(t.monitorRef)],
);

/**
 * Outbox events the monitoring loop wrote (a deviation it raised or changed), with the monitor job
 * that caused them and its trigger depth: the deviationChanged trigger never starts that monitor
 * for them, and starts others one level deeper (src/monitors/triggers.ts).
 */
export const monitorEventCauses = sqliteTable(
  "monitor_event_causes",
  {
    eventId: text("event_id").primaryKey(),
    monitorRef: text("monitor_ref").notNull(),
    monitorJobId: text("monitor_job_id").notNull(),
    depth: integer("depth").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [index("monitor_event_causes_created_idx").on(t.createdAt)],
);

/**
 * Search indices (spec 2.10): the standard ones (inserted by the migration, fixed ids) and custom
 * ones built from a library file. Documents live in each index's SearchIndex Durable Object; this row
 * holds what lists and permissions need, the mapping, the library and the last synchronisation.
 */
export const searchIndices = sqliteTable(
  "search_indices",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    /** The name for uniqueness and case-insensitive lookups: NFC, Unicode case-folded (src/pkg/unicode.ts nameKey). */
    nameKey: text("name_key"),
    displayName: text("display_name").notNull(),
    description: text("description"),
    type: text("type").notNull(),
    ...owned,
    triggerSchedule: text("trigger_schedule"),
    /** JSON mapping; null for a custom index that never synchronised. */
    mapping: text("mapping"),
    /** The library's JavaScript source (custom indices, and fed standard ones). */
    library: text("library"),
    libraryFileName: text("library_file_name"),
    /** JSON array: the read permissions the library's clients act with (those of who uploaded it). */
    grantPermissions: text("grant_permissions"),
    status: text("status").notNull(),
    documentCount: integer("document_count").notNull().default(0),
    lastSync: text("last_sync"),
    ...audit,
  },
  (t) => [
    uniqueIndex("search_indices_name_uq").on(t.nameKey),
    index("search_indices_owner_idx").on(t.ownerId, t.id),
    index("search_indices_type_idx").on(t.type, t.id),
  ],
);

/** The lines a custom library logged and what each synchronisation reported (`GET /Indices/{id}/Logs`). */
export const searchIndexLogs = sqliteTable(
  "search_index_logs",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    indexId: text("index_id").notNull(),
    syncId: text("sync_id"),
    level: text("level").notNull(),
    message: text("message").notNull(),
    at: text("at").notNull(),
  },
  (t) => [index("search_index_logs_index_idx").on(t.indexId, t.seq)],
);

/** Saved queries (spec 2.10): a search request for one index, with free metadata ("My Actions"). */
export const searchQueries = sqliteTable(
  "search_queries",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    description: text("description"),
    ...owned,
    indexId: text("index_id")
      .notNull()
      .references(() => searchIndices.id),
    queryObject: text("query_object").notNull(),
    metadata: text("metadata"),
    ...audit,
  },
  (t) => [
    index("search_queries_owner_idx").on(t.ownerId, t.id),
    index("search_queries_index_idx").on(t.indexId, t.id),
    index("search_queries_name_idx").on(sql`lower(${t.name})`, t.id),
  ],
);

/**
 * Media references (the original product's `MediaReferences`): a named pointer to a media (a photo of
 * a finding, a document), linked to activities. A referenced media cannot be deleted (409).
 */
export const mediaReferences = sqliteTable(
  "media_references",
  {
    id: text("id").primaryKey(),
    mediaId: text("media_id")
      .notNull()
      .references(() => medias.id),
    displayName: text("display_name"),
    description: text("description"),
    ...owned,
    ...audit,
  },
  (t) => [index("media_references_media_idx").on(t.mediaId), index("media_references_name_idx").on(sql`lower(${t.displayName})`, t.id)],
);

/** Which media references an activity shows. */
export const activityMediaReferences = sqliteTable(
  "activity_media_references",
  {
    activityId: text("activity_id")
      .notNull()
      .references(() => activities.id),
    mediaReferenceId: text("media_reference_id")
      .notNull()
      .references(() => mediaReferences.id),
    createdAt: text("created_at").notNull(),
    createdBy: text("created_by"),
  },
  (t) => [
    primaryKey({ columns: [t.activityId, t.mediaReferenceId] }),
    index("activity_media_references_reference_idx").on(t.mediaReferenceId, t.activityId),
  ],
);

/**
 * The directory of users (issue 21 §4): every principal that has called the API, a person or a
 * machine client, recorded from its token by src/users/recorder.ts (at most once per isolate every
 * few minutes, after the response). Read-only through GET /Users; the identity provider stays the
 * source of truth, so nothing else refers to these rows.
 */
export const users = sqliteTable(
  "users",
  {
    /** The token's `sub`. */
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    /** `person` or `client` (a machine client, e.g. of /connect/token). */
    kind: text("kind").notNull(),
    /** A machine client's OAuth client id (`client_id`, `azp` or `appid`); NULL for people. */
    clientId: text("client_id"),
    firstSeenAt: text("first_seen_at").notNull(),
    lastSeenAt: text("last_seen_at").notNull(),
  },
  (t) => [index("users_name_idx").on(sql`lower(${t.name})`, t.id)],
);

/**
 * Webhook subscriptions (issue 25, "Subscribers hear it"): an https URL, the outbox events it wants
 * (webhook_subscription_filters) and a signing secret sealed at rest (src/subscriptions/secret.ts).
 * `failing_since` is the first failed attempt since the last success; a subscription that has only
 * failed for three days is disabled with its reason. While it fails, one attempt at a time holds
 * `attempt_lease_until` (its other deliveries wait without an attempt).
 */
export const webhookSubscriptions = sqliteTable(
  "webhook_subscriptions",
  {
    id: text("id").primaryKey(),
    url: text("url").notNull(),
    description: text("description"),
    /** The filters as the API shows them: a JSON list of `{ entityKind, action }` (action null: any). */
    filters: text("filters").notNull(),
    enabled: integer("enabled", { mode: "boolean" }).notNull(),
    disabledReason: text("disabled_reason"),
    disabledAt: text("disabled_at"),
    /** `whsec_...`, sealed (AES-256-GCM under a key derived from DATAPROCESSING_ENCRYPTION_KEY). */
    secretSealed: text("secret_sealed").notNull(),
    secretRotatedAt: text("secret_rotated_at").notNull(),
    failingSince: text("failing_since"),
    lastSuccessAt: text("last_success_at"),
    lastFailureAt: text("last_failure_at"),
    attemptLeaseUntil: text("attempt_lease_until"),
    ...audit,
  },
  (t) => [index("webhook_subscriptions_created_idx").on(t.createdAt, t.id)],
);

/** One row per (subscription, entity kind, action); action `*` matches any action of the kind. */
export const webhookSubscriptionFilters = sqliteTable(
  "webhook_subscription_filters",
  {
    subscriptionId: text("subscription_id")
      .notNull()
      .references(() => webhookSubscriptions.id, { onDelete: "cascade" }),
    entityKind: text("entity_kind").notNull(),
    action: text("action").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.subscriptionId, t.entityKind, t.action] }),
    index("webhook_subscription_filters_match_idx").on(t.entityKind, t.action),
  ],
);

/**
 * One delivery per (subscription, event): the unique key makes a redelivered event enqueue nothing
 * twice. `payload` is the body as sent (redacted, at most 64 KiB). `round` counts redeliveries asked
 * for by hand; `round_attempts` the attempts of the current round (the backoff schedule's position).
 */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: text("id").primaryKey(),
    subscriptionId: text("subscription_id")
      .notNull()
      .references(() => webhookSubscriptions.id, { onDelete: "cascade" }),
    eventId: text("event_id").notNull(),
    eventType: text("event_type").notNull(),
    entityKind: text("entity_kind").notNull(),
    entityId: text("entity_id").notNull(),
    occurredAt: text("occurred_at").notNull(),
    payload: text("payload").notNull(),
    truncated: integer("truncated", { mode: "boolean" }).notNull(),
    /** pending, retrying, succeeded, deadLettered. */
    status: text("status").notNull(),
    attempts: integer("attempts").notNull(),
    round: integer("round").notNull(),
    roundAttempts: integer("round_attempts").notNull(),
    nextAttemptAt: text("next_attempt_at"),
    lastAttemptAt: text("last_attempt_at"),
    lastStatusCode: integer("last_status_code"),
    lastResponseExcerpt: text("last_response_excerpt"),
    lastError: text("last_error"),
    deliveredAt: text("delivered_at"),
    enqueuedAt: text("enqueued_at"),
    leaseUntil: text("lease_until"),
    redeliveredAt: text("redelivered_at"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("webhook_deliveries_event_uq").on(t.subscriptionId, t.eventId),
    index("webhook_deliveries_subscription_idx").on(t.subscriptionId, t.createdAt, t.id),
    index("webhook_deliveries_due_idx").on(t.status, t.nextAttemptAt),
    index("webhook_deliveries_event_idx").on(t.eventId),
    index("webhook_deliveries_created_idx").on(t.createdAt),
  ],
);

/**
 * Measurements (issue 35): the catalogues the original Signals service named, in one table told apart
 * by `kind`: channel types (`channelType`, each with the quantity it measures, which fixes the units it
 * accepts and whether the thickness analysis runs), data origins (`dataOrigin`: manual inspection, a
 * sensor, a model) and channel availabilities (`channelAvailability`, whether a channel accepts readings).
 * The built-in rows are the migration's (fixed ids); people add their own.
 */
export const channelCatalogue = sqliteTable(
  "channel_catalogue",
  {
    id: text("id").primaryKey(),
    kind: text("kind").notNull(),
    name: text("name").notNull(),
    /** The name for uniqueness and case-insensitive lookups: NFC, Unicode case-folded (src/pkg/unicode.ts nameKey). */
    nameKey: text("name_key").notNull(),
    description: text("description"),
    /** Channel types: thickness, pressure, temperature, vibration, flow, level or other. */
    quantity: text("quantity"),
    /** Channel availabilities: whether a channel with it accepts readings. */
    acceptsReadings: integer("accepts_readings", { mode: "boolean" }),
    builtIn: integer("built_in", { mode: "boolean" }).notNull().default(false),
    ...audit,
  },
  (t) => [uniqueIndex("channel_catalogue_name_uq").on(t.kind, t.nameKey), index("channel_catalogue_kind_idx").on(t.kind, t.nameKey)],
);

/**
 * Channels (issue 35): a place measured again and again on an asset. Its readings live in its
 * ChannelSeries Durable Object (durable-objects/channel-series.ts), never here; this row holds what
 * lists filter and order by: the latest reading, the analysis of a thickness channel (as JSON, with
 * its next inspection date in a column) and whether one of its controllers' alarms is active.
 */
export const channels = sqliteTable(
  "channels",
  {
    id: text("id").primaryKey(),
    /** The original client's `channelNumber`: a positive integer, unique, numbered by the service. */
    channelNumber: integer("channel_number").notNull(),
    name: text("name").notNull(),
    description: text("description"),
    assetId: text("asset_id")
      .notNull()
      .references(() => assets.id),
    assetKind: text("asset_kind").notNull(),
    /** The asset's plant (the asset itself for a plant), for the plant filter. */
    plantId: text("plant_id"),
    channelTypeId: text("channel_type_id")
      .notNull()
      .references(() => channelCatalogue.id),
    dataOriginId: text("data_origin_id")
      .notNull()
      .references(() => channelCatalogue.id),
    availabilityId: text("availability_id")
      .notNull()
      .references(() => channelCatalogue.id),
    unit: text("unit").notNull(),
    nominalThickness: real("nominal_thickness"),
    minimumThickness: real("minimum_thickness"),
    /** The longest interval between inspections, in years (API 570/510's maximum); NULL: the setting's default (10). */
    maxIntervalYears: real("max_interval_years"),
    controllers: text("controllers").notNull().default("[]"),
    maxShelveMinutes: integer("max_shelve_minutes").notNull().default(480),
    /** The latest analysis (JSON), NULL for channels without one. */
    analysis: text("analysis"),
    nextInspectionAt: text("next_inspection_at"),
    /** `normal`, or `alarm` while one of its controllers' alarms is active. */
    alarmState: text("alarm_state").notNull().default("normal"),
    readingCount: integer("reading_count").notNull().default(0),
    lastReadingAt: text("last_reading_at"),
    lastValue: real("last_value"),
    /** The series' version the row was last projected from: an older projection never overwrites a newer one. */
    seriesVersion: integer("series_version").notNull().default(0),
    ...audit,
  },
  (t) => [
    uniqueIndex("channels_number_uq").on(t.channelNumber),
    index("channels_asset_idx").on(t.assetId, t.channelNumber),
    index("channels_plant_idx").on(t.plantId, t.channelNumber),
    index("channels_type_idx").on(t.channelTypeId, t.channelNumber),
    index("channels_next_inspection_idx").on(t.nextInspectionAt, t.channelNumber),
    index("channels_created_idx").on(sql`${t.createdAt} desc`, t.id),
  ],
);

/**
 * The inspection feed (issue 35): per activity input whose template names a channel, what the feed
 * last did with its value: `recorded` (the reading at `timestamp` in `channel_id`, its source
 * `activity:{activity_id}:{input_template_id}`), `cleared` (no value: nothing in any series) or
 * `unresolved` (the value is kept on the activity, no reading holds it; `problem` says why). Written
 * only by src/measurements/feed/store.ts, from the events queue; `activity_version` is the
 * activity's `updated_at` it was computed from, so an older computation never overwrites a newer one.
 */
export const activityInputReadings = sqliteTable(
  "activity_input_readings",
  {
    activityId: text("activity_id").notNull(),
    inputTemplateId: text("input_template_id").notNull(),
    status: text("status").notNull(),
    channelId: text("channel_id"),
    timestamp: integer("timestamp"),
    value: real("value"),
    problem: text("problem"),
    activityVersion: text("activity_version").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.activityId, t.inputTemplateId] }), index("activity_input_readings_channel_idx").on(t.channelId)],
);

/**
 * The audit trail (issue 34, docs/decisions.md "The audit trail"): one row per change of any entity,
 * written by the outbox builders in the same batch (and under the same guard) as the change and its
 * event. `before` and `after` are the entity's redacted state (JSON text; null before a creation and
 * after a deletion); `before` is the previous record's `after` of the same entity, read inside the
 * insert. Rows are only ever inserted; the minute cron seals them (audit_seals) and, past the
 * retention, moves whole days of them to R2 (audit_segments).
 */
export const auditRecords = sqliteTable(
  "audit_records",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    /** The id of the outbox event written with it. */
    eventId: text("event_id").notNull(),
    occurredAt: text("occurred_at").notNull(),
    entityKind: text("entity_kind").notNull(),
    entityId: text("entity_id").notNull(),
    action: text("action").notNull(),
    /** The entity's ETag token after the change (null when the kind has none, or after a deletion). */
    etag: text("etag"),
    /** user, client (a machine client's token) or service (the service itself; `cause` says what). */
    actorType: text("actor_type").notNull(),
    actorId: text("actor_id"),
    actorName: text("actor_name"),
    cause: text("cause"),
    requestId: text("request_id"),
    reason: text("reason"),
    before: text("before"),
    after: text("after"),
  },
  (t) => [
    index("audit_records_entity_idx").on(t.entityKind, t.entityId, t.seq),
    index("audit_records_occurred_idx").on(t.occurredAt),
    index("audit_records_actor_idx").on(t.actorId, t.seq),
    index("audit_records_request_idx").on(t.requestId),
  ],
);

/**
 * The hash chain over audit_records, one row per sealed record (written by the cron, in seq order):
 * `hash` = SHA-256 of the record's canonical form with `prev_hash` (src/audit/chain.ts).
 */
export const auditSeals = sqliteTable("audit_seals", {
  seq: integer("seq").primaryKey(),
  prevHash: text("prev_hash").notNull(),
  hash: text("hash").notNull(),
  sealedAt: text("sealed_at").notNull(),
});

/**
 * Archived segments of the trail: a run of sealed records (one UTC day at most) moved to R2 as gzip
 * NDJSON, with the hashes that tie it into the chain. D1 keeps this index; the records live in R2.
 */
export const auditSegments = sqliteTable(
  "audit_segments",
  {
    firstSeq: integer("first_seq").primaryKey(),
    lastSeq: integer("last_seq").notNull(),
    day: text("day").notNull(),
    records: integer("records").notNull(),
    firstAt: text("first_at").notNull(),
    lastAt: text("last_at").notNull(),
    prevHash: text("prev_hash").notNull(),
    firstHash: text("first_hash").notNull(),
    lastHash: text("last_hash").notNull(),
    objectKey: text("object_key").notNull(),
    bytes: integer("bytes").notNull(),
    archivedAt: text("archived_at").notNull(),
  },
  (t) => [index("audit_segments_last_idx").on(t.lastSeq), index("audit_segments_at_idx").on(t.firstAt, t.lastAt)],
);

/**
 * Which archived segments hold records of an entity (one row per entity and segment), so an entity's
 * history reads only its own segments; and its last archived state (`after` of its newest archived
 * record), the `before` of its next change once its records have left D1.
 */
export const auditArchivedEntities = sqliteTable(
  "audit_archived_entities",
  {
    entityKind: text("entity_kind").notNull(),
    entityId: text("entity_id").notNull(),
    firstSeq: integer("first_seq").notNull(),
    lastSeq: integer("last_seq").notNull(),
    lastAfter: text("last_after"),
  },
  (t) => [primaryKey({ columns: [t.entityKind, t.entityId, t.firstSeq] })],
);

/**
 * Spreadsheet imports (issue 37, src/imports): one row per import, its file in R2 (the uploaded file's
 * object, or the small body the request carried), its column mapping and its progress. The rows it
 * wrote are in import_rows, its per-row problems in import_problems.
 */
export const imports = sqliteTable(
  "imports",
  {
    id: text("id").primaryKey(),
    /** What the rows become: deviations (src/imports/kinds.ts). */
    kind: text("kind").notNull(),
    /** queued, running, completed or failed. */
    status: text("status").notNull(),
    /** 1 for a dry run: every row validated, nothing written. */
    dryRun: integer("dry_run", { mode: "boolean" }).notNull(),
    format: text("format").notNull(),
    fileName: text("file_name").notNull(),
    /** The uploaded file it reads (null when the body carried the content). */
    fileId: text("file_id"),
    /** The R2 object it reads (the file's, or imports/<id>/source). */
    sourceKey: text("source_key").notNull(),
    /** Rows written under the same key are written once (import_rows). */
    importKey: text("import_key").notNull(),
    rowKeyColumn: text("row_key_column"),
    /** JSON: column header -> field. */
    mapping: text("mapping").notNull(),
    total: integer("total"),
    processed: integer("processed").notNull().default(0),
    created: integer("created").notNull().default(0),
    skipped: integer("skipped").notNull().default(0),
    failed: integer("failed").notNull().default(0),
    /** How many chunks the rows were split into (null until split), and how many are done. */
    chunks: integer("chunks"),
    chunksDone: integer("chunks_done").notNull().default(0),
    /** Why a failed import failed (a per-file problem), as JSON. */
    problem: text("problem"),
    /** Who committed it: the rows are written in their name. */
    createdByName: text("created_by_name"),
    finishedAt: text("finished_at"),
    ...audit,
  },
  (t) => [index("imports_created_idx").on(t.createdAt, t.id)],
);

/** The entity each imported row became, by the import key and the row's key: a row is written once. */
export const importRows = sqliteTable(
  "import_rows",
  {
    importKey: text("import_key").notNull(),
    rowKey: text("row_key").notNull(),
    entityId: text("entity_id").notNull(),
    importId: text("import_id").notNull(),
    rowNumber: integer("row_number").notNull(),
  },
  (t) => [primaryKey({ columns: [t.importKey, t.rowKey] }), index("import_rows_import_idx").on(t.importId, t.rowNumber)],
);

/**
 * The rows of an import that had problems: the row's cells as read (JSON, by header, so the problems
 * download as the same columns to fix and send again) and its problems (JSON: column, field, rule, message).
 */
export const importProblems = sqliteTable(
  "import_problems",
  {
    importId: text("import_id")
      .notNull()
      .references(() => imports.id, { onDelete: "cascade" }),
    rowNumber: integer("row_number").notNull(),
    cells: text("cells").notNull(),
    problems: text("problems").notNull(),
  },
  (t) => [primaryKey({ columns: [t.importId, t.rowNumber] })],
);

/**
 * Inspection plans (issue 36): recurring work generated from a work template. The due rules are JSON
 * (calendar, fromCompletion, condition), checked by src/plans/schema.ts; the assets designated are
 * `asset_ids` (JSON), and each generates on its own target (inspection_plan_targets) unless
 * `item_per` is `plan` (one target, `asset_key` 'all').
 */
export const inspectionPlans = sqliteTable(
  "inspection_plans",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    description: text("description"),
    workTemplateId: text("work_template_id").notNull(),
    assetIds: text("asset_ids").notNull(),
    itemPer: text("item_per").notNull(),
    ...owned,
    responsibleId: text("responsible_id"),
    responsibleName: text("responsible_name"),
    tags: text("tags").notNull(),
    properties: text("properties").notNull(),
    status: text("status").notNull(),
    /** The IANA zone the calendar and the intervals are counted in. */
    timeZone: text("time_zone").notNull(),
    /** Local date-time (`YYYY-MM-DDTHH:mm`) the calendar counts from; a from-completion plan's first due date. */
    startDate: text("start_date").notNull(),
    calendar: text("calendar"),
    fromCompletion: text("from_completion"),
    condition: text("condition"),
    /** The channel the condition reads (NULL without one): the tick finds plans whose channel moved on by it. */
    conditionChannelId: text("condition_channel_id"),
    leadTimeDays: integer("lead_time_days").notNull().default(0),
    stack: integer("stack", { mode: "boolean" }).notNull().default(false),
    reminderIntervalDays: integer("reminder_interval_days"),
    ...audit,
  },
  (t) => [
    index("inspection_plans_name_idx").on(t.name, t.id),
    index("inspection_plans_template_idx").on(t.workTemplateId),
    index("inspection_plans_channel_idx").on(t.conditionChannelId),
    index("inspection_plans_created_idx").on(t.createdAt, t.id),
  ],
);

/**
 * Where each plan stands per asset (or once, `asset_key` 'all'): the next due date and why, when its
 * work item is generated (`generate_at`, the due date minus the lead time; NULL while nothing is to be
 * generated, e.g. an open item that does not stack), the open, last generated and last completed items.
 * The minute tick finds due targets by a range scan of `generate_at`.
 */
export const inspectionPlanTargets = sqliteTable(
  "inspection_plan_targets",
  {
    planId: text("plan_id")
      .notNull()
      .references(() => inspectionPlans.id, { onDelete: "cascade" }),
    assetKey: text("asset_key").notNull(),
    nextDueAt: text("next_due_at"),
    nextReason: text("next_reason"),
    generateAt: text("generate_at"),
    openWorkItemId: text("open_work_item_id"),
    lastGeneratedWorkItemId: text("last_generated_work_item_id"),
    lastGeneratedDueAt: text("last_generated_due_at"),
    lastGeneratedAt: text("last_generated_at"),
    lastCompletedWorkItemId: text("last_completed_work_item_id"),
    lastCompletedAt: text("last_completed_at"),
    /** The calendar occurrences up to this one are consumed (generated, or skipped by catch-up). */
    calendarAfter: text("calendar_after"),
    /** Condition plans: a channel's next inspection date up to this one is consumed (an item was generated for it). */
    conditionAfter: text("condition_after"),
    /** Meter plans: the reading value the next threshold counts from. */
    meterBase: real("meter_base"),
    /** The channel's series version this target was computed from (condition plans recompute when it moves on). */
    channelVersion: integer("channel_version"),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.planId, t.assetKey] }),
    index("inspection_plan_targets_generate_idx").on(t.generateAt),
    index("inspection_plan_targets_open_idx").on(t.openWorkItemId),
    index("inspection_plan_targets_asset_idx").on(t.assetKey),
  ],
);

/**
 * The work items plans generated: one per plan, asset and due date (the unique key that makes a
 * generation run twice create one), with the reason and the overdue reminders sent.
 */
export const inspectionPlanItems = sqliteTable(
  "inspection_plan_items",
  {
    workItemId: text("work_item_id").primaryKey(),
    planId: text("plan_id").notNull(),
    assetKey: text("asset_key").notNull(),
    dueAt: text("due_at").notNull(),
    reason: text("reason").notNull(),
    generatedAt: text("generated_at").notNull(),
  },
  (t) => [uniqueIndex("inspection_plan_items_due_uq").on(t.planId, t.assetKey, t.dueAt)],
);

/**
 * Overdue work items (issue 36): a work item past its due date and not completed is announced once
 * (`overdue` event) and again every `reminder_days` while it stays open; `next_reminder_at` NULL when
 * no reminders are due. Written by src/plans/overdue.ts.
 */
export const overdueWorkItems = sqliteTable(
  "overdue_work_items",
  {
    workItemId: text("work_item_id").primaryKey(),
    dueAt: text("due_at").notNull(),
    announcedAt: text("announced_at").notNull(),
    reminders: integer("reminders").notNull().default(0),
    nextReminderAt: text("next_reminder_at"),
  },
  (t) => [index("overdue_work_items_reminder_idx").on(t.nextReminderAt)],
);

/** How far the overdue scan has read work items' due and creation dates (one row, `name` 'overdue'). */
export const overdueScans = sqliteTable("overdue_scans", {
  name: text("name").primaryKey(),
  scannedUntil: text("scanned_until").notNull(),
});
