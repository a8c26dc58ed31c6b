/**
 * Entering alarms, in one D1 batch per {@link ENTER_CHUNK} alarms: the alarm rows first (a second
 * entry of an active alarm fails the batch there), their history entries and `entered` events, and
 * the controllers' actions, each written by its owner's statement builders: the deviation (row,
 * designation of the item's asset, property values, its `created` event and the event's cause), the
 * work item (as POST /WorkItems makes it, with its events), the link between the two, and the item's
 * criticality. So everything an alarm does exists exactly when the alarm does.
 */
import { jsonChunks, type Database } from "../../db/statements";
import { outboxForRowsStatement, outboxManyStatements, type EventContext } from "../../events/outbox";
import { insertDesignationsStatements, type AssetRef } from "../../assets/designations";
import { newEtagToken, type WriteContext } from "../../pkg/db";
import { DEFAULT_ENTITY_TYPE_ID } from "../../properties/entity-types/schema";
import {
  checkLinkedValues,
  insertPropertyValuesStatements,
  toLinkedProperties,
  toPropertyValueRows,
  type PropertyValueRow,
  type ResolvedProperty,
} from "../../properties/values";
import {
  composeDeviation,
  DEVIATION_KIND,
  deviationValues,
  insertDeviationsStatements,
  linkWorkItemsStatements,
  type DeviationRow,
  type DeviationValues,
} from "../../deviations/store";
import type { DeviationOrigin } from "../../deviations/schema";
import { generatedReferenceId } from "../../deviations/write";
import { prepareInstantiation, readInstantiationSources, type InstantiationSources } from "../../work-items/instantiate";
import { workItemCreateStatements } from "../../work-items/write";
import type { WorkItemFields } from "../../work-items/fields";
import { DEFAULT_STATUS } from "../../work/common";
import { conditionsSeen, describeConditions, prepareActions, type ConditionSeen, type PreparedActions } from "../monitors/controllers";
import type { Controller } from "../monitors/schema";
import { alarmCriticalityStatements, type MonitorItem } from "../populations/store";
import { eventCausesStatements } from "./causes";
import { alarmPayload, causingJob, type Evaluation } from "./payload";
import { ALARM_EVENT_KIND, enterAlarmsStatements, type EnteredAlarm } from "./store";

/** Alarms entered per batch (each with at most one deviation and one work item). */
const ENTER_CHUNK = 20;

interface Entering {
  item: MonitorItem;
  controller: Controller;
}

interface AssetFacts {
  ref: AssetRef | null;
  name: string;
}

/** The entering items' assets: a designation for plants, main systems and equipment; organizations have none. */
async function assetsOf(db: Database, assetIds: readonly string[]): Promise<Map<string, AssetFacts>> {
  const { results } = await db
    .prepare(
      `SELECT a.id, a.kind, a.name, a.plant_id, p.name AS plant_name FROM assets a LEFT JOIN assets p ON p.id = a.plant_id
        WHERE a.id IN (SELECT value FROM json_each(?1))`,
    )
    .bind(JSON.stringify([...new Set(assetIds)]))
    .all<{ id: string; kind: AssetRef["kind"]; name: string; plant_id: string | null; plant_name: string | null }>();
  return new Map(
    results.map((a) => {
      const plant =
        a.kind === "plant"
          ? { id: a.id, name: a.name }
          : a.plant_id && a.plant_name !== null
            ? { id: a.plant_id, name: a.plant_name }
            : null;
      return [a.id, { name: a.name, ref: a.kind === "organization" ? null : { id: a.id, kind: a.kind, name: a.name, plant } }];
    }),
  );
}

interface Plan {
  actions: Map<string, PreparedActions>;
  workItemFields: { properties: ResolvedProperty[] } | null;
  sources: InstantiationSources | null;
  assets: Map<string, AssetFacts>;
}

/** Everything the entering alarms' actions need, read once per evaluation (per controller, not per item). */
async function plan(db: Database, entering: readonly Entering[], notes: string[]): Promise<Plan> {
  const actions = new Map<string, PreparedActions>();
  for (const { controller } of entering) {
    if (actions.has(controller.name)) continue;
    const prepared = await prepareActions(
      db,
      { name: controller.name, conditions: [], actions: controller.actions },
      `controller '${controller.name}'`,
    );
    for (const problem of prepared.problems) notes.push(`${problem.field}: action skipped: ${problem.message}`);
    actions.set(controller.name, prepared);
  }
  const templates = [...new Set([...actions.values()].map((a) => a.workTemplateId).filter((id): id is string => id !== null))];
  let workItemFields: Plan["workItemFields"] = null;
  let sources: InstantiationSources | null = null;
  if (templates.length > 0) {
    // A work item is of the default type, as POST /WorkItems makes it without typeId; its required properties would refuse it.
    const checked = await checkLinkedValues(db, {
      entityTypeId: DEFAULT_ENTITY_TYPE_ID,
      applicationRule: "WorkItem",
      values: [],
      field: "workItem.properties",
      entityTypeField: "workItem.typeId",
    });
    if (checked.ok) workItemFields = { properties: checked.properties };
    else notes.push(`Work items not created: ${checked.errors.map((e) => e.message).join("; ")}`);
    sources = await readInstantiationSources(db, templates);
  }
  const needAssets = entering.some(
    ({ controller }) => actions.get(controller.name)?.deviation || actions.get(controller.name)?.workTemplateId,
  );
  const assets = needAssets
    ? await assetsOf(
        db,
        entering.map((e) => e.item.assetId),
      )
    : new Map<string, AssetFacts>();
  return { actions, workItemFields, sources, assets };
}

function deviationDescription(
  monitor: Evaluation["monitor"],
  controller: Controller,
  item: MonitorItem,
  assetName: string,
  jobId: string,
  conditions: ConditionSeen[],
): string {
  return (
    `Raised by monitor ${monitor.monitorId} '${monitor.name}', controller '${controller.name}', on ` +
    `${item.assetType} '${assetName}' (${item.assetId}): ` +
    `${describeConditions(conditions)}. Monitor job ${jobId}.`
  ).slice(0, 10_000);
}

/**
 * The `created` events of the deviations a batch raises (rows `{ id, payload }`), with their ids
 * (`{prefix}:{deviation id}`, as outboxForRowsStatement names them) for the events' causes.
 */
function deviationEventsStatements(
  db: Database,
  events: EventContext,
  rows: readonly { id: string; payload: string }[],
): { statements: D1PreparedStatement[]; eventIds: string[] } {
  const statements: D1PreparedStatement[] = [];
  const eventIds: string[] = [];
  for (const json of jsonChunks(rows)) {
    const prefix = events.uuid();
    statements.push(
      outboxForRowsStatement(
        db,
        { ...events, uuid: () => prefix },
        { entityKind: DEVIATION_KIND, action: "created" },
        {
          sql: "SELECT json_extract(value, '$.id') AS entity_id, json_extract(value, '$.payload') AS payload FROM json_each(?1)",
          bindings: [json],
        },
      ),
    );
    for (const row of JSON.parse(json) as { id: string }[]) eventIds.push(`${prefix}:${row.id}`);
  }
  return { statements, eventIds };
}

/** The write context of the loop's writes: no person, the events' time, request and ids. */
function writeContextFor(db: Database, events: EventContext): WriteContext {
  return {
    db,
    now: events.now,
    actorId: events.actorId,
    actorName: null,
    requestId: events.requestId,
    uuid: () => events.uuid(),
    expectedEtag: undefined,
  };
}

export async function enter(db: Database, evaluation: Evaluation, entering: readonly Entering[]): Promise<void> {
  const { job, monitor, events, byAsset, notes } = evaluation;
  const ctx = writeContextFor(db, events);
  const prepared = await plan(db, entering, notes);
  const owner = { id: monitor.ownerId, name: monitor.ownerName };
  for (let start = 0; start < entering.length; start += ENTER_CHUNK) {
    const chunk = entering.slice(start, start + ENTER_CHUNK);
    const alarms: EnteredAlarm[] = [];
    const alarmEvents: { entityKind: typeof ALARM_EVENT_KIND; entityId: string; action: "entered"; payload: unknown }[] = [];
    const criticality = new Map<string, number>();
    const deviations: DeviationValues[] = [];
    const designated: { entityId: string; assets: AssetRef[] }[] = [];
    const propertyValues: PropertyValueRow[] = [];
    const deviationEvents: { id: string; payload: string }[] = [];
    const links: { deviationId: string; workItemId: string }[] = [];
    const workItemStatements: D1PreparedStatement[] = [];
    for (const { item, controller } of chunk) {
      const actions = prepared.actions.get(controller.name);
      const conditions = conditionsSeen(controller, byAsset.get(item.assetId));
      const asset = prepared.assets.get(item.assetId);
      const assetName = asset?.name ?? item.assetName ?? item.assetId;
      const alarmId = ctx.uuid();
      const deviationId = actions?.deviation ? ctx.uuid() : null;
      const workItemId =
        actions?.workTemplateId && prepared.workItemFields && prepared.sources?.works.has(actions.workTemplateId) ? ctx.uuid() : null;
      const refs = asset?.ref ? [asset.ref] : [];

      if (deviationId && actions?.deviation) {
        const d = actions.deviation;
        const origin: DeviationOrigin = {
          kind: "monitoring",
          monitor: { id: monitor.id, monitorId: monitor.monitorId, name: monitor.name },
          controller: controller.name,
          monitorJobId: job.id,
          alarmId,
        };
        const row: DeviationRow = {
          id: deviationId,
          reference_id: generatedReferenceId(deviationId),
          description: deviationDescription(monitor, controller, item, assetName, job.id, conditions),
          status: d.status,
          type_id: d.typeId,
          owner_id: owner.id,
          owner_name: owner.name,
          risk_id: null,
          risk_name: null,
          metadata: null,
          origin: JSON.stringify(origin),
          etag: newEtagToken(),
          created_at: ctx.now,
          updated_at: ctx.now,
        };
        const composed = await composeDeviation(row, {
          typeName: d.typeName,
          assets: refs,
          properties: toLinkedProperties(d.properties),
          relationships: [],
          workItemIds: workItemId ? [workItemId] : [],
        });
        deviations.push(deviationValues(row, ctx.actorId, monitor.id));
        designated.push({ entityId: deviationId, assets: refs });
        propertyValues.push(...toPropertyValueRows(DEVIATION_KIND, deviationId, d.properties));
        deviationEvents.push({ id: deviationId, payload: JSON.stringify(composed.value) });
      }

      if (workItemId && actions?.workTemplateId && prepared.sources && prepared.workItemFields) {
        const fields: WorkItemFields = {
          status: DEFAULT_STATUS,
          dueDate: null,
          owner,
          typeId: DEFAULT_ENTITY_TYPE_ID,
          properties: prepared.workItemFields.properties,
          designations: refs,
          tags: [],
        };
        const instantiation = await prepareInstantiation(
          ctx,
          {
            workItemId,
            owner,
            templates: [{ id: actions.workTemplateId, field: `controller '${controller.name}'.actions.createWorkItem.workTemplateId` }],
            usedRevisions: new Map(),
            firstActivityPosition: 0,
            firstBasedOnPosition: 0,
          },
          prepared.sources,
        );
        const displayName = `${controller.name}: ${assetName} (${monitor.monitorId})`.slice(0, 500);
        workItemStatements.push(
          ...workItemCreateStatements(
            ctx,
            workItemId,
            { displayName, referenceId: null, metadata: null },
            fields,
            instantiation,
            deviationId ? [deviationId] : [],
          ).statements,
        );
        if (deviationId) links.push({ deviationId, workItemId });
      }

      if (actions?.criticality !== null && actions?.criticality !== undefined)
        criticality.set(item.id, Math.max(criticality.get(item.id) ?? 0, actions.criticality));
      const recorded = JSON.stringify(conditions);
      alarms.push({
        id: alarmId,
        historyId: ctx.uuid(),
        itemId: item.id,
        assetId: item.assetId,
        controller: controller.name,
        conditions: recorded,
        deviationId,
        workItemId,
      });
      alarmEvents.push({
        entityKind: ALARM_EVENT_KIND,
        entityId: alarmId,
        action: "entered",
        payload: alarmPayload(
          "alarm",
          { id: alarmId, controller: controller.name, deviationId, workItemId },
          evaluation,
          item,
          conditions,
          ctx.now,
        ),
      });
    }

    const raised = deviationEventsStatements(db, events, deviationEvents);
    await db.batch([
      // First: a second entry of an active alarm fails here (unique active_key), and the whole batch with it.
      ...enterAlarmsStatements(db, alarms, { id: job.id, monitorRef: job.monitor_ref }, ctx.now),
      ...outboxManyStatements(db, events, alarmEvents),
      ...alarmCriticalityStatements(
        db,
        [...criticality].map(([item, value]) => ({ id: ctx.uuid(), item, value })),
        job.id,
        ctx.now,
      ),
      ...insertDeviationsStatements(db, deviations),
      ...insertDesignationsStatements(db, DEVIATION_KIND, designated),
      ...insertPropertyValuesStatements(db, propertyValues),
      ...raised.statements,
      ...eventCausesStatements(db, raised.eventIds, causingJob(job), ctx.now),
      ...workItemStatements,
      ...linkWorkItemsStatements(db, links, ctx.now, ctx.actorId),
    ]);
  }
}
