// The lists bench's data (issue 22): `count` rows in every listed table, generated inside SQLite
// (INSERT ... SELECT over one table of random draws), with the distributions a client's filters
// meet in practice. Proportions do not depend on the size: 10,000 and 100,000 rows hold the same
// shares (a status, an owner, a plant, a month), so a query over the larger set reads ten times the
// matches when its plan reads every match, and the same rows when it stops at the page.
//
//   status     new 10%, active 15%, inProgress 10%, onHold 5%, completed 25%, closed 30%, cancelled 5%
//   owner      50 owners (owner-0 ... owner-49), 2% each
//   created    spread evenly over five years (2021-2025), so a month holds 1.7% of the rows
//   dates      due dates and activity dates drawn uniformly over the same five years
//   assets     20 plants ("Plant 1" ... "Plant 20") of 100 equipment each; every deviation, work item
//              and activity designates one equipment (and so its plant): a plant holds 5%, an
//              equipment 0.05%
//   tags       tag-0 ... tag-9 on work items and work templates, 10% each
//   properties a severity per kind (1..5, 20% at 4 or more) on deviations, work items, work templates
//              and models
//   names      display names and config names drawn at random (their order is not the creation order)
//
// Everything is plain SQL without bound parameters (the sealed run options are base64url text), so
// the same statements seed D1 (bench) and the sqlite3 shell (investigation).

const GENERAL = "00000000-0000-4000-8000-000000000001";
const UNGROUPED = "00000000-0000-4000-8000-000000000002";
export const BENCH_TYPE = "0b0c0000-0000-4000-8000-0000000000e1";
export const PLANTS = 20;
export const EQUIPMENT = 2000;
/** Work templates, activity templates, job configs, models and monitors that others point at. */
const REFERENCED = 1000;

/** A fixed UUID per table and row number: `prefix` is 4 hex digits. */
export const benchId = (prefix, n) => `0b0c${prefix}-0000-4000-8000-${String(n).padStart(12, "0")}`;
const idSql = (prefix, expr) => `printf('0b0c${prefix}-0000-4000-8000-%012d', ${expr})`;

export const IDS = {
  plant: "0001",
  equipment: "0002",
  deviation: "0010",
  workItem: "0011",
  activity: "0012",
  workTemplate: "0013",
  activityTemplate: "0014",
  activityType: "0015",
  file: "0016",
  media: "0017",
  job: "0018",
  chain: "0019",
  config: "001a",
  model: "001b",
  monitor: "001c",
  monitorJob: "001d",
  definition: "001e",
};

export const SEVERITY = {
  deviation: { name: "benchDeviationSeverity", rule: "Deviation" },
  workItem: { name: "benchWorkItemSeverity", rule: "WorkItem" },
  workTemplate: { name: "benchWorkTemplateSeverity", rule: "WorkTemplate" },
  model: { name: "benchModelSeverity", rule: "Model" },
};

const STATUS = (x) =>
  `CASE WHEN ${x} % 100 < 10 THEN 'new' WHEN ${x} % 100 < 25 THEN 'active' WHEN ${x} % 100 < 35 THEN 'inProgress' ` +
  `WHEN ${x} % 100 < 40 THEN 'onHold'` +
  ` WHEN ${x} % 100 < 65 THEN 'completed' WHEN ${x} % 100 < 95 THEN 'closed' ELSE 'cancelled' END`;
const OWNER = (x) => `'owner-' || (${x} % 50)`;
const OWNER_NAME = (x) => `'Owner ' || (${x} % 50)`;
const START = 1609459200; // 2021-01-01T00:00:00Z
const SPAN = 5 * 365 * 86400;
const ISO = (seconds) => `strftime('%Y-%m-%dT%H:%M:%S.000Z', ${seconds}, 'unixepoch')`;
/** Creation times in row order, evenly over five years whatever the count. */
const CREATED = (count) => ISO(`${START} + s.n * ${Math.floor(SPAN / count)}`);
/** A day drawn from the five years, at midnight UTC. */
const DAY = (x) => `strftime('%Y-%m-%dT00:00:00.000Z', ${START} + (${x} % 1826) * 86400, 'unixepoch')`;
/** The equipment (1..EQUIPMENT) of a row, and its plant (1..PLANTS). */
const EQUIPMENT_OF = (x) => `(1 + ${x} % ${EQUIPMENT})`;
const PLANT_OF = (x) => `(1 + ${EQUIPMENT_OF(x)} % ${PLANTS})`;
const SEVERITY_VALUE = (x) =>
  `CASE WHEN ${x} % 100 < 35 THEN 1 WHEN ${x} % 100 < 60 THEN 2 WHEN ${x} % 100 < 80 THEN 3 WHEN ${x} % 100 < 92 THEN 4 ELSE 5 END`;

function designations(kind, prefix) {
  return [
    `INSERT INTO designations (entity_kind, entity_id, asset_kind, asset_id, derived)
     SELECT '${kind}', ${idSql(prefix, "s.n")}, 'equipment', ${idSql(IDS.equipment, EQUIPMENT_OF("s.e"))}, 0 FROM bench_seq s`,
    `INSERT INTO designations (entity_kind, entity_id, asset_kind, asset_id, derived)
     SELECT '${kind}', ${idSql(prefix, "s.n")}, 'plant', ${idSql(IDS.plant, PLANT_OF("s.e"))}, 1 FROM bench_seq s`,
  ];
}

function severity(kind, prefix, definition) {
  const definitionId = benchId(IDS.definition, Object.keys(SEVERITY).indexOf(kind) + 1);
  return `INSERT INTO property_values (entity_kind, entity_id, name, position, definition_id, value_text, value_num, value_json)
    SELECT '${kind}', ${idSql(prefix, "s.n")}, '${definition.name}', 0, '${definitionId}', NULL, ${SEVERITY_VALUE("s.f")},
    CAST(${SEVERITY_VALUE("s.f")} AS TEXT) FROM bench_seq s`;
}

/**
 * The statements that seed `count` rows per list (count >= 10 * REFERENCED). `sealed` is a run-options
 * blob sealed with the bench's key (job configs are read through it).
 */
export function listSeedStatements(count, sealed) {
  if (count < 10 * REFERENCED) throw new Error(`the lists bench needs at least ${10 * REFERENCED} rows`);
  const now = "'2026-01-01T00:00:00.000Z'";
  const created = CREATED(count);
  const workItems = Math.floor(count / 10);
  return [
    // Six independent draws per row, drawn once (a subquery would draw again wherever it is read).
    "CREATE TABLE bench_seq (n INTEGER PRIMARY KEY, a INTEGER NOT NULL, b INTEGER NOT NULL, c INTEGER NOT NULL, d " +
      "INTEGER NOT NULL, e INTEGER NOT NULL, f INTEGER NOT NULL)",
    `INSERT INTO bench_seq WITH RECURSIVE q(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM q WHERE n < ${count})
     SELECT n, abs(random()) % 1000000, abs(random()) % 1000000, abs(random()) % 1000000, abs(random()) % 1000000,
     abs(random()) % 1000000, abs(random()) % 1000000 FROM q`,

    // Shared rows: a second entity type, 20 plants of 100 equipment, 10 activity types, 10 data types, the severities.
    `INSERT INTO entity_types (id, name, name_key, applies_to, etag, created_at, updated_at) VALUES ` +
      `('${BENCH_TYPE}', 'Bench type', 'bench type', NULL, 'e', ${now}, ${now})`,
    `INSERT INTO assets (id, kind, name, name_key, parent_id, plant_id, etag, created_at, updated_at)
     SELECT ${idSql(IDS.plant, "n")}, 'plant', 'Plant ' || n, 'plant ' || n, NULL, ${idSql(IDS.plant, "n")}, 'e', ${now},
     ${now} FROM bench_seq s WHERE n <= ${PLANTS}`,
    `INSERT INTO assets (id, kind, name, name_key, parent_id, plant_id, etag, created_at, updated_at)
     SELECT ${idSql(IDS.equipment, "n")}, 'equipment', 'Equipment ' || n, 'equipment ' || n,
     ${idSql(IDS.plant, `1 + n % ${PLANTS}`)}, ${idSql(IDS.plant, `1 + n % ${PLANTS}`)}, 'e', ${now}, ${now}
     FROM bench_seq s WHERE n <= ${EQUIPMENT}`,
    `INSERT INTO activity_types (id, name, name_key, etag, created_at, updated_at)
     SELECT ${idSql(IDS.activityType, "n")}, 'Bench activity type ' || n, 'bench activity type ' || n, 'e', ${now}, ${now} FROM
     bench_seq s WHERE n <= 10`,
    `INSERT INTO data_types (id, name, name_key, allowed_extensions, etag, created_at, updated_at)
     SELECT 'bench-type-' || n, 'Bench type ' || n, 'bench type ' || n, '["csv"]', 'e', ${now}, ${now} FROM bench_seq s WHERE n <= 10`,
    ...Object.values(SEVERITY).map(
      (p, i) => `INSERT INTO property_definitions (id, name, format, application_rule, category_id, etag, created_at, updated_at)
        VALUES ('${benchId(IDS.definition, i + 1)}', '${p.name}', 'integer', '${p.rule}', '${UNGROUPED}', 'e', ${now}, ${now})`,
    ),
    ...[GENERAL, BENCH_TYPE].flatMap((type) =>
      Object.values(SEVERITY).map(
        (_, i) =>
          `INSERT OR IGNORE INTO entity_type_properties (entity_type_id, property_definition_id, position) VALUES ` +
          `('${type}', '${benchId(IDS.definition, i + 1)}', ${i + 10})`,
      ),
    ),

    // Deviations: 10% of the bench type, 30% without a risk.
    `INSERT INTO deviations (id, reference_id, reference_key, description, status, type_id, owner_id, owner_name, risk_id,
    risk_name, etag, created_at, updated_at)
     SELECT ${idSql(IDS.deviation, "s.n")}, printf('DEV-B%07d', s.n), printf('dev-b%07d', s.n), 'Bench deviation', ${STATUS("s.a")},
       CASE WHEN s.b % 10 = 0 THEN '${BENCH_TYPE}' ELSE '${GENERAL}' END, ${OWNER("s.c")}, ${OWNER_NAME("s.c")},
       CASE WHEN s.d % 10 < 3 THEN NULL ELSE 'R-' || (s.d % 10) END, CASE WHEN s.d % 10 < 3 THEN NULL ELSE 'Risk ' || (s.d %
       10) END, 'e', ${created}, ${created}
     FROM bench_seq s`,
    ...designations("deviation", IDS.deviation),
    severity("deviation", IDS.deviation, SEVERITY.deviation),

    // Work items: every tenth row has the activities of the activities table (10 each).
    `INSERT INTO work_items (id, display_name, reference_id, status, due_date, type_id, owner_id, owner_name, tags, etag,
    created_at, updated_at)
     SELECT ${idSql(IDS.workItem, "s.n")}, 'Work item ' || printf('%06d', s.b), printf('WI-B%07d', s.n), ${STATUS("s.a")},
     ${DAY("s.d")}, '${GENERAL}',
       ${OWNER("s.c")}, ${OWNER_NAME("s.c")}, json_array('tag-' || (s.f % 10)), 'e', ${created}, ${created}
     FROM bench_seq s`,
    `INSERT INTO entity_tags (entity_kind, entity_id, tag) SELECT 'workItem', ${idSql(IDS.workItem, "s.n")}, 'tag-' ` +
      `|| (s.f % 10) FROM bench_seq s`,
    `INSERT INTO work_item_templates (work_item_id, work_template_id, work_template_revision, position, created_at)
     SELECT ${idSql(IDS.workItem, "s.n")}, ${idSql(IDS.workTemplate, `1 + s.e % ${REFERENCED}`)}, 1, 0, ${created} FROM bench_seq s`,
    ...designations("workItem", IDS.workItem),
    severity("workItem", IDS.workItem, SEVERITY.workItem),

    // Activities: ten per work item of the first tenth.
    `INSERT INTO activities (id, work_item_id, based_on_id, based_on_revision, display_name, reference_id, status,
    date_of_activity, owner_id, owner_name,
       responsible_id, responsible_name, activity_type_id, position, etag, created_at, updated_at)
     SELECT ${idSql(IDS.activity, "s.n")}, ${idSql(IDS.workItem, `1 + (s.n - 1) % ${workItems}`)},
     ${idSql(IDS.activityTemplate, `1 + s.e % ${REFERENCED}`)}, 1,
       'Activity ' || printf('%06d', s.b), printf('ACT-B%07d', s.n), ${STATUS("s.a")}, ${DAY("s.d")}, ${OWNER("s.c")}, ${OWNER_NAME("s.c")},
       ${OWNER("s.f")}, ${OWNER_NAME("s.f")}, ${idSql(IDS.activityType, "1 + s.b % 10")}, (s.n - 1) / ${workItems}, 'e',
       ${created}, ${created}
     FROM bench_seq s`,
    ...designations("activity", IDS.activity),

    // Work and activity templates: one revision each, the latest.
    `INSERT INTO work_templates (id, revision, is_latest, display_name, reference_id, status, type_id, owner_id, owner_name,
    tags, properties, etag, created_at, updated_at)
     SELECT ${idSql(IDS.workTemplate, "s.n")}, 1, 1, 'Work template ' || printf('%06d', s.b), printf('WT-B%07d', s.n),
     ${STATUS("s.a")}, '${GENERAL}',
       ${OWNER("s.c")}, ${OWNER_NAME("s.c")}, json_array('tag-' || (s.f % 10)), '[]', 'e', ${created}, ${created}
     FROM bench_seq s`,
    `INSERT INTO entity_tags (entity_kind, entity_id, tag) SELECT 'workTemplate', ` +
      `${idSql(IDS.workTemplate, "s.n")}, 'tag-' || (s.f % 10) FROM bench_seq s`,
    severity("workTemplate", IDS.workTemplate, SEVERITY.workTemplate),
    `INSERT INTO activity_templates (id, revision, is_latest, display_name, reference_id, status, owner_id, owner_name,
    activity_type_id, template_type, etag, created_at, updated_at)
     SELECT ${idSql(IDS.activityTemplate, "s.n")}, 1, 1, 'Activity template ' || printf('%06d', s.b), printf('AT-B%07d', s.n),
     ${STATUS("s.a")},
       ${OWNER("s.c")}, ${OWNER_NAME("s.c")}, ${idSql(IDS.activityType, "1 + s.d % 10")}, 'kind-' || (s.e % 5), 'e', ${created}, ${created}
     FROM bench_seq s`,
    `INSERT INTO work_item_activity_templates (work_item_id, activity_template_id, activity_template_revision, created_at)
     SELECT ${idSql(IDS.workItem, `1 + s.f % ${workItems}`)}, ${idSql(IDS.activityTemplate, "s.n")}, 1, ${created} FROM bench_seq s`,

    // Files: 95% stored, 80% attached to an asset (visible to every reader), 10 data types.
    `INSERT INTO files (id, name, data_type_id, size, content_type, r2_key, state, status, owner_id, owner_name, object_type,
    object_id, etag, created_at, updated_at, created_by)
     SELECT ${idSql(IDS.file, "s.n")}, printf('measurements-%07d.csv', s.b), 'bench-type-' || (1 + s.d % 10), 1000, 'text/csv',
     'bench/' || s.n,
       CASE WHEN s.a % 100 < 95 THEN 'ready' ELSE 'uploading' END,
       CASE WHEN s.e % 100 < 60 THEN 'processed' WHEN s.e % 100 < 75 THEN 'new' WHEN s.e % 100 < 85 THEN 'pending' WHEN s.e %
       100 < 90 THEN 'processing' ELSE 'none' END,
       ${OWNER("s.c")}, ${OWNER_NAME("s.c")}, CASE WHEN s.f % 10 < 8 THEN 'equipment' END, CASE WHEN s.f % 10 < 8 THEN
       ${idSql(IDS.equipment, EQUIPMENT_OF("s.f"))} END,
       'e', ${created}, ${created}, ${OWNER("s.c")}
     FROM bench_seq s`,

    // Media: 80% images.
    `INSERT INTO medias (id, name, content_type, size, checksum, declared_type, is_image, variants, recognition, owner_id,
    owner_name, etag, created_at, updated_at)
     SELECT ${idSql(IDS.media, "s.n")}, printf('photo-%07d.jpg', s.b), 'image/jpeg', 1000, 'sha256-bench', CASE WHEN s.a % 10 <
     8 THEN 'image' ELSE 'document' END, 0,
       '[]', '{"integrity":"passed"}', ${OWNER("s.c")}, ${OWNER_NAME("s.c")}, 'e', ${created}, ${created}
     FROM bench_seq s`,

    // Job configs, then jobs: chains of two, each of one of the first REFERENCED configs.
    `INSERT INTO job_configurations (id, name, name_key, image_name, image_tag, cpu_cores, memory_gb, run_options_enc,
    timeout_minutes, object_owner_id, object_owner_name, etag, created_at, updated_at)
     SELECT ${idSql(IDS.config, "s.n")}, printf('Config %06d-%d', s.b, s.n), printf('config %06d-%d', s.b, s.n), 'bench/model',
     '1', 1, 1, '${sealed}', 60,
       ${OWNER("s.c")}, ${OWNER_NAME("s.c")}, 'e', ${created}, ${created}
     FROM bench_seq s`,
    `INSERT INTO jobs (id, configuration_id, chain_id, chain_position, status, error_message, spec, run_options_enc,
    object_owner_id, object_owner_name, etag, created_at, updated_at)
     SELECT ${idSql(IDS.job, "s.n")}, ${idSql(IDS.config, `1 + s.e % ${REFERENCED}`)}, ${idSql(IDS.chain, "(s.n + 1) / 2")}, (s.n + 1) % 2,
       CASE WHEN s.a % 100 < 70 THEN 'Success' WHEN s.a % 100 < 85 THEN 'Failed' WHEN s.a % 100 < 90 THEN 'InProgress' WHEN s.a
       % 100 < 95 THEN 'Started' ELSE 'Unknown' END,
       CASE WHEN s.a % 100 BETWEEN 70 AND 84 THEN 'exit code ' || (s.d % 20) END, '{"image":"bench/model:1"}', '${sealed}',
       ${OWNER("s.c")}, ${OWNER_NAME("s.c")}, 'e', ${ISO(`${START} + ((s.n + 1) / 2) * ${Math.floor((2 * SPAN) / count)}`)}, ${created}
     FROM bench_seq s`,

    // Models (10 definition names), monitors of the first REFERENCED models, monitor jobs of the first REFERENCED monitors.
    `INSERT INTO models (id, model_id, name, definition_name, definition_version, status, cpu_cores, memory_gb,
    configurable_parameters, static_parameters, type_id, owner_id, owner_name, etag, created_at, updated_at)
     SELECT ${idSql(IDS.model, "s.n")}, 'MOD-B' || s.n, 'Model ' || printf('%06d', s.b), 'definition-' || (s.d % 10), '1',
       CASE WHEN s.a % 10 < 6 THEN 'Active' WHEN s.a % 10 < 9 THEN 'Draft' ELSE 'Deprecated' END, 1, 1, '[]', '[]', '${GENERAL}',
       ${OWNER("s.c")}, ${OWNER_NAME("s.c")}, 'e', ${created}, ${created}
     FROM bench_seq s`,
    severity("model", IDS.model, SEVERITY.model),
    `INSERT INTO monitors (id, monitor_id, name, model_ref, status, controllers, owner_id, owner_name, etag, created_at, updated_at)
     SELECT ${idSql(IDS.monitor, "s.n")}, 'MON-B' || s.n, 'Monitor ' || printf('%06d', s.b), ${idSql(IDS.model, `1 + s.e % ${REFERENCED}`)},
       CASE WHEN s.a % 10 < 6 THEN 'Active' WHEN s.a % 10 < 9 THEN 'Draft' ELSE 'Deprecated' END, '[]', ${OWNER("s.c")},
       ${OWNER_NAME("s.c")}, 'e', ${created}, ${created}
     FROM bench_seq s`,
    `INSERT INTO monitor_jobs (id, monitor_ref, status, definition_name, definition_version, location, parameters,
    trigger_kind, deadline_at, created_at, updated_at)
     SELECT ${idSql(IDS.monitorJob, "s.n")}, ${idSql(IDS.monitor, `1 + s.e % ${REFERENCED}`)}, 'Completed', 'definition-1',
     '1', 'ACR', '{}', 'schedule', ${created}, ${created}, ${created}
     FROM bench_seq s`,
    "DROP TABLE bench_seq",
  ];
}
