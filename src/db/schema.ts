/**
 * The D1 schema (drizzle). Migrations in migrations/ are generated from this file with
 * `npm run db:generate` and reviewed before they are committed; docs/storage.md describes each table.
 */
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

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
    isDefault: integer("is_default", { mode: "boolean" }).notNull().default(false),
    ...audit,
  },
  (t) => [uniqueIndex("categories_name_uq").on(sql`lower(${t.name})`)],
);

export const classifications = sqliteTable(
  "classifications",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    format: text("format").notNull(),
    description: text("description"),
    ...audit,
  },
  (t) => [uniqueIndex("classifications_name_uq").on(sql`lower(${t.name})`)],
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
    description: text("description"),
    /** The application rule of the definitions this type may link; null (General) accepts every rule. */
    appliesTo: text("applies_to"),
    iconName: text("icon_name"),
    iconColor: text("icon_color"),
    isDefault: integer("is_default", { mode: "boolean" }).notNull().default(false),
    metadata: text("metadata"),
    ...audit,
  },
  (t) => [uniqueIndex("entity_types_name_uq").on(sql`lower(${t.name})`)],
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
    sortOrder: integer("sort_order").notNull(),
    status: text("status")
      .notNull()
      .references(() => systemStatuses.name),
    ...audit,
  },
  (t) => [uniqueIndex("user_statuses_name_uq").on(sql`lower(${t.name})`), index("user_statuses_order_idx").on(t.sortOrder)],
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
  (t) => [index("medias_owner_idx").on(t.ownerId, t.createdAt)],
);

/** Data types of uploaded files (spec 2.9): id and name unique across the API. */
export const dataTypes = sqliteTable(
  "data_types",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    /** JSON array of lower-case extensions without the dot, e.g. ["xlsx","xls","csv"]. */
    allowedExtensions: text("allowed_extensions").notNull(),
    ...audit,
  },
  (t) => [uniqueIndex("data_types_name_uq").on(sql`lower(${t.name})`)],
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
    index("files_state_status_idx").on(t.state, t.status),
    index("files_data_type_idx").on(t.dataTypeId, t.createdAt),
    index("files_owner_idx").on(t.ownerId, t.createdAt),
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
    uploadedAt: text("uploaded_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.uploadId, t.partNumber] })],
);
