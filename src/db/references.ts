import type { Database } from "./statements";
/**
 * What refers to what: every column of src/db/schema.ts that holds another row's id (or a user
 * status), in one place, with what a delete of that row does about it.
 *
 * - {@link USAGE}: the columns the shared "is it in use?" checks count. Entity types (the type of a
 *   deviation, work item, work template or model) and user statuses (the status of anything with a
 *   status) are used by many areas, so their delete asks {@link countUses}, which reads this table;
 *   an area whose rows start to carry one adds its column here. (These used to be push-registries
 *   filled as a side effect of building the apps.)
 * - {@link OWN_CHECKS}: columns an area's own delete checks, because its message names what refers
 *   (a job configuration by name, the work templates listing an activity template): where it is.
 * - {@link NOT_USAGE}: columns that are not usage a delete must respect, and why.
 *
 * test/conventions/references.test.ts reads the schema and fails when a column that looks like a
 * reference (a foreign key, `*_id`, `*_ref`, `status`) is in none of the three, so a new column is a
 * decision, not an accident. Table and column names here are trusted constants used in SQL.
 */

export interface Reference {
  table: string;
  column: string;
}

export const USAGE = {
  entityType: [
    { table: "deviations", column: "type_id" },
    { table: "work_items", column: "type_id" },
    { table: "work_templates", column: "type_id" },
    { table: "models", column: "type_id" },
  ],
  userStatus: [
    { table: "deviations", column: "status" },
    { table: "work_items", column: "status" },
    { table: "activities", column: "status" },
    { table: "work_templates", column: "status" },
    { table: "activity_templates", column: "status" },
  ],
} as const satisfies Record<string, readonly Reference[]>;

export type UsedEntity = keyof typeof USAGE;

/** How many rows refer to `id` through the entity's columns in {@link USAGE}, in one round trip. */
export async function countUses(db: Database, entity: UsedEntity, id: string): Promise<number> {
  const counts = await db.batch<{ n: number }>(
    USAGE[entity].map(({ table, column }) => db.prepare(`SELECT count(*) AS n FROM ${table} WHERE ${column} = ?1`).bind(id)),
  );
  return counts.reduce((sum, result) => sum + (result.results[0]?.n ?? 0), 0);
}

/** SQL that holds while no row refers to the id bound as `param` (for a guard inside the delete's own batch). */
export function unusedCondition(entity: UsedEntity, param = "?1"): string {
  return USAGE[entity].map(({ table, column }) => `NOT EXISTS (SELECT 1 FROM ${table} WHERE ${column} = ${param})`).join(" AND ");
}

/** Columns whose target's delete checks them itself: `table.column` → where. */
export const OWN_CHECKS: Record<string, string> = {
  "property_definitions.category_id": "deleteCategory (src/properties/categories/store.ts)",
  "property_definitions.classification_id": "the classification delete (src/properties/classifications/store.ts)",
  "entity_type_properties.property_definition_id": "definitionUsage (src/properties/definitions/store.ts)",
  "property_values.definition_id": "definitionUsage (src/properties/definitions/store.ts)",
  "files.data_type_id": "the data type delete (src/upload/data-types/store.ts)",
  "files.object_id": "deleteAsset (src/assets/store.ts): a file's access metadata naming an asset",
  "assets.parent_id": "deleteAsset (src/assets/store.ts): child assets",
  "designations.asset_id": "deleteAsset (src/assets/store.ts): designations",
  "activity_templates.activity_type_id": "the activity type delete (src/templates/activity-types/store.ts)",
  "activities.activity_type_id": "the activity type delete (src/templates/activity-types/store.ts)",
  "work_template_activity_templates.activity_template_id":
    "deleteActivityTemplate (src/templates/activity/write.ts): listed by a work template",
  "work_item_activity_templates.activity_template_id":
    "deleteActivityTemplate (src/templates/activity/write.ts): a revision a work item used is in_use",
  "activities.based_on_id": "deleteActivityTemplate (src/templates/activity/write.ts): a revision activities are based on is in_use",
  "work_item_templates.work_template_id":
    "the work template delete (src/templates/work/write.ts): a revision a work item is based on is in_use",
  "job_configurations.output_type_id": "the output type delete (src/dataprocessing/output-types.ts)",
  "job_configurations.next_config_id": "the job configuration delete (src/dataprocessing/configs.ts): a chain pointing at it",
  "monitors.model_ref": "deleteModel (src/monitors/models/store.ts)",
  "media_references.media_id": "the media delete (src/media-references/store.ts)",
  "channels.asset_id": "deleteAsset (src/assets/store.ts): channels measured on it (and the foreign key)",
  "channels.channel_type_id": "deleteCatalogueEntry (src/measurements/catalogue/store.ts)",
  "channels.data_origin_id": "deleteCatalogueEntry (src/measurements/catalogue/store.ts)",
  "channels.availability_id": "deleteCatalogueEntry (src/measurements/catalogue/store.ts)",
  "inspection_plans.work_template_id": "the work template delete (src/templates/work/write.ts): refused while a plan uses it",
};

const PERSON = "a person (the token's subject or a user id), not a row a delete looks at";
const NOT_AN_ID = "not a reference: text the client chose, a readable number, or an id of something outside the database";
const OWN_STATES = "the row's own state (a fixed set of values), not a user status";
const CHILD = "a part of its parent, deleted with it (ON DELETE CASCADE or in the parent's delete batch)";
const LINK = "a link row, deleted with either end by that end's delete";
const HISTORY = "history: keeps the id of what it happened to, which may since have been deleted";

/** Columns that look like references but are no usage a delete must respect: `table.column` → why. */
export const NOT_USAGE: Record<string, string> = {
  "classification_elements.classification_id": CHILD,
  "classification_elements.parent_id": CHILD,
  "entity_type_properties.entity_type_id": CHILD,
  "user_statuses.status": "a system status (seeded, never deleted)",
  "property_values.entity_id": CHILD,
  "outbox.entity_id": HISTORY,
  "outbox.actor_id": PERSON,
  "outbox.request_id": NOT_AN_ID,
  "audit_records.event_id": "the outbox event it was written with (pruned after 7 days; the record stays)",
  "audit_records.entity_id": HISTORY,
  "audit_records.actor_id": PERSON,
  "audit_records.request_id": NOT_AN_ID,
  "audit_archived_entities.entity_id": HISTORY,
  "medias.owner_id": PERSON,
  "files.status": OWN_STATES,
  "imports.status": OWN_STATES,
  "imports.file_id":
    "the uploaded file an import reads; a file deleted while its import runs fails the import (its problem says so), a finished " +
    "import keeps the id as history",
  "import_rows.entity_id":
    "the record an imported row became: it may be deleted later, and the row stays written once under its import key (history)",
  "import_rows.import_id": HISTORY,
  "import_problems.import_id": CHILD,
  "files.owner_id": PERSON,
  "file_uploads.file_id": CHILD,
  "file_uploads.r2_upload_id": NOT_AN_ID,
  "file_uploads.owner_id": PERSON,
  "upload_parts.upload_id": CHILD,
  "assets.plant_id": "derived from parent_id (the root of the asset's tree), which deleteAsset checks",
  "designations.entity_id": CHILD,
  "entity_tags.entity_id": CHILD,
  "deviations.reference_id": NOT_AN_ID,
  "deviations.owner_id": PERSON,
  "deviations.risk_id": "the risk's id in the risk service (a free reference, not validated)",
  "deviations.origin_monitor_ref": HISTORY,
  "deviation_relationships.deviation_id": LINK,
  "deviation_relationships.related_id": LINK,
  "deviation_work_items.deviation_id": LINK,
  "deviation_work_items.work_item_id": LINK,
  "work_templates.reference_id": NOT_AN_ID,
  "work_templates.owner_id": PERSON,
  "section_templates.work_template_id": CHILD,
  "section_templates.work_template_revision": CHILD,
  "work_template_activity_templates.work_template_id": CHILD,
  "work_template_activity_templates.work_template_revision": CHILD,
  "work_template_activity_templates.section_template_id": CHILD,
  "activity_templates.reference_id": NOT_AN_ID,
  "activity_templates.owner_id": PERSON,
  "input_templates.activity_template_id": CHILD,
  "input_templates.activity_template_revision": CHILD,
  "work_items.reference_id": NOT_AN_ID,
  "work_items.owner_id": PERSON,
  "work_item_templates.work_item_id": CHILD,
  "work_item_activity_templates.work_item_id": CHILD,
  "activities.work_item_id": CHILD,
  "activities.reference_id": NOT_AN_ID,
  "activities.owner_id": PERSON,
  "activities.responsible_id": PERSON,
  "activity_inputs.activity_id": CHILD,
  "activity_inputs.input_template_id":
    "names the input template of the frozen revision the activity is based on (revisions are never changed once in use)",
  "file_references.owner_id": CHILD,
  "file_references.platform_file_id":
    "a copy of a file reference pointing at an uploaded file; it stays readable as a reference after the file goes",
  "schedules.owner_id": CHILD,
  "job_configurations.object_owner_id": PERSON,
  "jobs.configuration_id": HISTORY,
  "jobs.chain_id": NOT_AN_ID,
  "jobs.status": OWN_STATES,
  "jobs.end_hook_ref": "the monitor job told when this job ends (src/dataprocessing/end-hooks.ts); history once that is gone",
  "jobs.cancelled_by_id": PERSON,
  "jobs.object_owner_id": PERSON,
  "job_outputs.job_id": CHILD,
  "job_outputs.job_output_type_id": HISTORY,
  "models.model_id": NOT_AN_ID,
  "models.status": OWN_STATES,
  "models.owner_id": PERSON,
  "populations.owner_id": CHILD,
  "population_items.population_id": CHILD,
  "population_items.asset_id": "a snapshot of the asset (id and name) the population was given; monitoring reads it as such",
  "population_items.last_monitor_job_id": HISTORY,
  "monitors.monitor_id": NOT_AN_ID,
  "monitors.status": OWN_STATES,
  "monitors.owner_id": PERSON,
  "monitor_jobs.monitor_ref": CHILD,
  "monitor_jobs.job_id": HISTORY,
  "monitor_jobs.status": OWN_STATES,
  "criticality_history.item_id": CHILD,
  "criticality_history.monitor_job_id": HISTORY,
  "monitor_alarms.monitor_ref": CHILD,
  "monitor_alarms.item_id": CHILD,
  "monitor_alarms.asset_id": HISTORY,
  "monitor_alarms.entered_job_id": HISTORY,
  "monitor_alarms.left_job_id": HISTORY,
  "monitor_alarms.deviation_id": HISTORY,
  "monitor_alarms.work_item_id": HISTORY,
  "monitor_alarms.plant_id": HISTORY,
  "monitor_alarms.acknowledged_by_id": PERSON,
  "monitor_alarms.assignee_id": PERSON,
  "monitor_alarms.shelved_by_id": PERSON,
  "monitor_alarm_events.alarm_id": CHILD,
  "monitor_alarm_events.monitor_ref": HISTORY,
  "monitor_alarm_events.item_id": HISTORY,
  "monitor_alarm_events.monitor_job_id": HISTORY,
  "monitor_alarm_events.actor_id": PERSON,
  "monitor_alarm_streaks.monitor_ref": CHILD,
  "monitor_alarm_streaks.item_id": CHILD,
  "monitor_alarm_streaks.job_id": HISTORY,
  "monitor_event_causes.monitor_ref": HISTORY,
  "monitor_event_causes.monitor_job_id": HISTORY,
  "search_indices.owner_id": PERSON,
  "search_indices.status": OWN_STATES,
  "search_index_logs.index_id": CHILD,
  "search_index_logs.sync_id": NOT_AN_ID,
  "search_queries.owner_id": PERSON,
  "search_queries.index_id": CHILD,
  "media_references.owner_id": PERSON,
  "activity_media_references.activity_id": LINK,
  "activity_media_references.media_reference_id": LINK,
  "users.client_id": NOT_AN_ID,
  "webhook_subscription_filters.subscription_id": CHILD,
  "channels.plant_id": "derived from the asset's tree (its plant), which deleteAsset checks through channels.asset_id",
  "channels.channel_number": NOT_AN_ID,
  "channel_catalogue.kind": OWN_STATES,
  "activity_input_readings.activity_id":
    "the inspection feed's record of an activity's input; the feed voids its readings and removes it when it hears of the delete",
  "activity_input_readings.input_template_id": "names the input template of the frozen revision the activity is based on",
  "activity_input_readings.channel_id": "where the feed recorded the input's reading; a deleted channel's series went with it",
  "activity_input_readings.status": OWN_STATES,
  "webhook_deliveries.subscription_id": CHILD,
  "webhook_deliveries.event_id": HISTORY,
  "webhook_deliveries.entity_id": HISTORY,
  "webhook_deliveries.status": OWN_STATES,
  "inspection_plans.owner_id": PERSON,
  "inspection_plans.responsible_id": PERSON,
  "inspection_plans.status": OWN_STATES,
  "inspection_plans.condition_channel_id":
    "the channel a plan's condition reads; a plan whose channel is deleted has no condition date (its other rules go on)",
  "inspection_plan_targets.plan_id": CHILD,
  "inspection_plan_targets.open_work_item_id": HISTORY,
  "inspection_plan_targets.last_generated_work_item_id": HISTORY,
  "inspection_plan_targets.last_completed_work_item_id": HISTORY,
  "inspection_plan_items.work_item_id": HISTORY,
  "inspection_plan_items.plan_id": HISTORY,
  "overdue_work_items.work_item_id": HISTORY,
};
