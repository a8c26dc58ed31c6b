/**
 * What an entered alarm does (issue 25), in its owners' statements: the deviation (row, designation of
 * the item's asset, property values, its `created` event and the event's cause), the work item (as POST
 * /WorkItems makes it, with its events), the link between the two, and the item's criticality. The
 * loop's entry (./enter.ts) runs them for the alarms it enters; a release (./release.ts) runs them for an
 * alarm entered while shelved, when its shelving ends and it is still active (issue 33).
 */
import { jsonChunks, type Database } from "../../db/statements";
import { outboxForRowsStatements, type EventContext } from "../../events/outbox";
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
import { describeConditions, prepareActions, type ConditionSeen, type PreparedActions } from "../monitors/controllers";
import type { Controller } from "../monitors/schema";
import { alarmCriticalityStatements } from "../populations/store";
import { eventCausesStatements } from "./causes";
import { causingJob, sourceLinks, type AlarmItem, type AlarmSource, type Evaluation } from "./payload";

export interface Entering {
  item: AlarmItem;
  controller: Controller;
}

export interface AssetFacts {
  ref: AssetRef | null;
  name: string;
  /** The asset's plant (itself for a plant; null for an organization or an asset without one). */
  plantId: string | null;
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
      return [
        a.id,
        {
          name: a.name,
          plantId: plant?.id ?? null,
          ref: a.kind === "organization" ? null : { id: a.id, kind: a.kind, name: a.name, plant },
        },
      ];
    }),
  );
}

export interface EffectsPlan {
  actions: Map<string, PreparedActions>;
  workItemFields: { properties: ResolvedProperty[] } | null;
  sources: InstantiationSources | null;
  assets: Map<string, AssetFacts>;
}

/**
 * Everything the actions of `entering` alarms need, read once per evaluation (per controller, not per
 * item), and the facts of `assetIds` (every entering alarm's asset: each records its plant).
 */
export async function planEffects(
  db: Database,
  entering: readonly Entering[],
  assetIds: readonly string[],
  notes: string[],
): Promise<EffectsPlan> {
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
  let workItemFields: EffectsPlan["workItemFields"] = null;
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
  // Every entering alarm records its asset's plant (the board filters by plant), so the assets are read whatever the actions.
  const assets = await assetsOf(db, assetIds);
  return { actions, workItemFields, sources, assets };
}

function deviationDescription(
  source: AlarmSource,
  controller: Controller,
  item: AlarmItem,
  assetName: string,
  jobId: string,
  conditions: ConditionSeen[],
): string {
  const [by, job] = source.kind === "channel" ? ["channel", "Readings batch"] : ["monitor", "Monitor job"];
  return (
    `Raised by ${by} ${source.number} '${source.name}', controller '${controller.name}', on ` +
    `${item.assetType} '${assetName}' (${item.assetId}): ` +
    `${describeConditions(conditions)}. ${job} ${jobId}.`
  ).slice(0, 10_000);
}

/**
 * One event per deviation row (rows `{ id, payload }`, sent in JSON chunks), written only where `guard`
 * (SQL over the row `j.value`) holds: the `created` events of the deviations a batch raises, or the
 * `updated` events of deviations whose status it set, each only while the deviation carries the
 * version the batch gave it (./leave.ts). Returns the statements and the events' ids
 * (`{prefix}:{deviation id}`, as outboxForRowsStatements names them) for the events' causes.
 */
export function deviationEventsStatements(
  db: Database,
  events: EventContext,
  action: "created" | "updated",
  rows: readonly { id: string; payload: string }[],
  guard = "",
): { statements: D1PreparedStatement[]; eventIds: string[] } {
  const statements: D1PreparedStatement[] = [];
  const eventIds: string[] = [];
  for (const json of jsonChunks(rows)) {
    const prefix = events.uuid();
    statements.push(
      ...outboxForRowsStatements(
        db,
        { ...events, uuid: () => prefix },
        { entityKind: DEVIATION_KIND, action },
        {
          sql:
            "SELECT json_extract(j.value, '$.id') AS entity_id, json_extract(j.value, '$.payload') AS payload FROM json_each(?1) j" +
            (guard ? ` WHERE ${guard}` : ""),
          bindings: [json],
        },
      ),
    );
    for (const row of JSON.parse(json) as { id: string }[]) eventIds.push(`${prefix}:${row.id}`);
  }
  return { statements, eventIds };
}

/** The write context of the loop's writes: no person (unless one released the alarm), the events' time, request and ids. */
export function writeContextFor(db: Database, events: EventContext): WriteContext {
  return {
    db,
    now: events.now,
    actorId: events.actorId,
    actorName: events.actorName ?? null,
    ...(events.actorType ? { actorType: events.actorType } : {}),
    cause: events.cause ?? null,
    reason: events.reason ?? null,
    requestId: events.requestId,
    uuid: () => events.uuid(),
    expectedEtag: undefined,
  };
}

/** What an alarm's actions made: its deviation (and the status it was raised with) and its work item. */
export interface Made {
  deviationId: string | null;
  deviationStatus: string | null;
  workItemId: string | null;
}

/** The actions of a batch of alarms, gathered alarm by alarm ({@link AlarmEffects.add}), written by {@link AlarmEffects.statements}. */
export class AlarmEffects {
  private readonly criticality = new Map<string, number>();
  private readonly deviations: DeviationValues[] = [];
  private readonly designated: { entityId: string; assets: AssetRef[] }[] = [];
  private readonly propertyValues: PropertyValueRow[] = [];
  private readonly deviationEvents: { id: string; payload: string }[] = [];
  private readonly links: { deviationId: string; workItemId: string }[] = [];
  private readonly workItemStatements: D1PreparedStatement[] = [];
  private readonly ctx: WriteContext;

  constructor(
    private readonly db: Database,
    private readonly evaluation: Pick<Evaluation, "job" | "source" | "events">,
    private readonly plan: EffectsPlan,
  ) {
    this.ctx = writeContextFor(db, evaluation.events);
  }

  /** The actions of one alarm, `alarmId`, of `controller` entered for `item` on `conditions`. */
  async add(item: AlarmItem, controller: Controller, alarmId: string, conditions: ConditionSeen[]): Promise<Made> {
    const { ctx, plan } = this;
    const { job, source } = this.evaluation;
    const channel = source.kind === "channel";
    const actions = plan.actions.get(controller.name);
    const asset = plan.assets.get(item.assetId);
    const assetName = asset?.name ?? item.assetName ?? item.assetId;
    const deviationId = actions?.deviation ? ctx.uuid() : null;
    const workItemId =
      actions?.workTemplateId && plan.workItemFields && plan.sources?.works.has(actions.workTemplateId) ? ctx.uuid() : null;
    const refs = asset?.ref ? [asset.ref] : [];
    const owner = { id: source.ownerId, name: source.ownerName };

    if (deviationId && actions?.deviation) {
      const d = actions.deviation;
      const { monitor, channel: channelLink } = sourceLinks(source);
      const origin: DeviationOrigin = {
        kind: channel ? "measurement" : "monitoring",
        monitor,
        channel: channelLink,
        controller: controller.name,
        monitorJobId: channel ? null : job.id,
        readingsBatchId: channel ? job.id : null,
        alarmId,
      };
      const row: DeviationRow = {
        id: deviationId,
        reference_id: generatedReferenceId(deviationId),
        description: deviationDescription(source, controller, item, assetName, job.id, conditions),
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
      this.deviations.push(deviationValues(row, ctx.actorId, channel ? null : source.id));
      this.designated.push({ entityId: deviationId, assets: refs });
      this.propertyValues.push(...toPropertyValueRows(DEVIATION_KIND, deviationId, d.properties));
      this.deviationEvents.push({ id: deviationId, payload: JSON.stringify(composed.value) });
    }

    if (workItemId && actions?.workTemplateId && plan.sources && plan.workItemFields) {
      const fields: WorkItemFields = {
        status: DEFAULT_STATUS,
        dueDate: null,
        owner,
        typeId: DEFAULT_ENTITY_TYPE_ID,
        properties: plan.workItemFields.properties,
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
        plan.sources,
      );
      const displayName = `${controller.name}: ${assetName} (${channel ? `channel ${source.number}` : source.number})`.slice(0, 500);
      this.workItemStatements.push(
        ...workItemCreateStatements(
          ctx,
          workItemId,
          { displayName, referenceId: null, metadata: null },
          fields,
          instantiation,
          deviationId ? [deviationId] : [],
        ).statements,
      );
      if (deviationId) this.links.push({ deviationId, workItemId });
    }

    // A criticality is a population item's; a channel's controllers cannot set one (refused when the channel is saved).
    if (!channel && actions?.criticality !== null && actions?.criticality !== undefined)
      this.criticality.set(item.id, Math.max(this.criticality.get(item.id) ?? 0, actions.criticality));
    return { deviationId, deviationStatus: deviationId ? (actions?.deviation?.status ?? null) : null, workItemId };
  }

  /** Everything the alarms added do, in their owners' statements (the criticality is the highest an item's alarms set). */
  statements(): D1PreparedStatement[] {
    const { db, ctx } = this;
    const { job, events } = this.evaluation;
    const raised = deviationEventsStatements(db, events, "created", this.deviationEvents);
    return [
      ...alarmCriticalityStatements(
        db,
        [...this.criticality].map(([item, value]) => ({ id: ctx.uuid(), item, value })),
        job.id,
        ctx.now,
      ),
      ...insertDeviationsStatements(db, this.deviations),
      ...insertDesignationsStatements(db, DEVIATION_KIND, this.designated),
      ...insertPropertyValuesStatements(db, this.propertyValues),
      ...raised.statements,
      ...eventCausesStatements(db, raised.eventIds, causingJob(job), ctx.now),
      ...this.workItemStatements,
      ...linkWorkItemsStatements(db, this.links, ctx.now, ctx.actorId),
    ];
  }
}
