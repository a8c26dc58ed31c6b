/**
 * Populations in D1: the owner of populations, population_items and criticality_history. A
 * population belongs to a model or a monitor (`owner_kind`); a monitor copies its model's when it is
 * created. Reads give a population as its owner shows it (items with their criticality band and, on
 * a monitor, their active alarms), in a fixed number of statements whatever the number of owners.
 * Writes are statement builders the resource's writes (./write.ts), the models' and monitors'
 * stores, the monitor jobs (reported criticality) and the monitoring loop compose into their batches.
 */
import { jsonRowStatements, tableStatements, type Database, type Row } from "../../db/statements";
import { criticalityHistory, populationItems, populations } from "../../db/schema";
import { ApiError } from "../../pkg/errors";
import {
  activeAlarmRow,
  activeAlarmsOfItems,
  activeAlarmsOfMonitorsStatement,
  activeAlarmsOfPopulationsStatement,
  alarmsByItem,
} from "../alarms/store";
import type { ActiveAlarm } from "../alarms/active";
import { storedEnum } from "../stored";
import { ASSET_TYPES, bandOf, type AssetType, type Population, type PopulationOwner } from "./schema";

const populationTable = tableStatements(populations);
const itemTable = tableStatements(populationItems);
const criticalityTable = tableStatements(criticalityHistory);

type PopulationRow = Row<typeof populations>;
type ItemRow = Row<typeof populationItems>;
/** A population row as read with every column (a list page among them), typed by the schema. */
export const populationRow = (raw: Record<string, unknown>): PopulationRow => populationTable.row(raw);
const itemRow = (raw: Record<string, unknown>): ItemRow => itemTable.row(raw);

const SELECT_POPULATION = `SELECT ${populationTable.columns} FROM populations`;
const ITEM_COLUMNS = itemTable.columns
  .split(", ")
  .map((column) => `i.${column}`)
  .join(", ");

/** The table of each kind of owner, for the guards that read it. */
const OWNER_TABLE: Record<PopulationOwner, string> = { model: "models", monitor: "monitors" };

export function toItem(r: ItemRow, alarms: ActiveAlarm[] = []) {
  return {
    id: r.id,
    populationId: r.populationId,
    assetReference: { id: r.assetId, name: r.assetName },
    criticality: r.criticality,
    band: bandOf(r.criticality),
    lastMonitorJobId: r.lastMonitorJobId,
    alarms,
  };
}
export type PopulationItem = ReturnType<typeof toItem>;

function toPopulation(p: PopulationRow, items: PopulationItem[]): Population {
  return {
    id: p.id,
    name: p.name,
    description: p.description,
    assetType: storedEnum(ASSET_TYPES, p.assetType, "populations.asset_type"),
    items,
  };
}

/** Items by population, each with its active alarms, in the order of `items`. */
function itemsByPopulation(items: readonly ItemRow[], alarms: ReadonlyMap<string, ActiveAlarm[]>): Map<string, PopulationItem[]> {
  const byPopulation = new Map<string, PopulationItem[]>();
  for (const item of items) {
    const list = byPopulation.get(item.populationId) ?? [];
    list.push(toItem(item, alarms.get(item.id)));
    byPopulation.set(item.populationId, list);
  }
  return byPopulation;
}

/**
 * The populations of many owners with their items, in one round trip (a batch of three statements)
 * whatever their number: the ids travel as one JSON parameter, so a page of 200 is no more queries than 1.
 */
export async function populationsOfMany(
  db: Database,
  kind: PopulationOwner,
  ownerIds: readonly string[],
): Promise<Map<string, Population[]>> {
  const byOwner = new Map<string, Population[]>(ownerIds.map((id) => [id, []]));
  if (ownerIds.length === 0) return byOwner;
  const ids = JSON.stringify([...new Set(ownerIds)]);
  const [pops, items, alarms] = await db.batch<Record<string, unknown>>([
    db
      .prepare(`${SELECT_POPULATION} WHERE owner_kind = ?1 AND owner_id IN (SELECT value FROM json_each(?2)) ORDER BY created_at, id`)
      .bind(kind, ids),
    db
      .prepare(
        `SELECT ${ITEM_COLUMNS} FROM population_items i JOIN populations p ON p.id = i.population_id
          WHERE p.owner_kind = ?1 AND p.owner_id IN (SELECT value FROM json_each(?2)) ORDER BY i.created_at, i.id`,
      )
      .bind(kind, ids),
    // A model's items have no alarms (only monitors run): the statement finds none for them.
    activeAlarmsOfMonitorsStatement(db, kind === "monitor" ? ownerIds : []),
  ]);
  const byPopulation = itemsByPopulation((items?.results ?? []).map(itemRow), alarmsByItem((alarms?.results ?? []).map(activeAlarmRow)));
  for (const p of (pops?.results ?? []).map(populationRow)) byOwner.get(p.ownerId)?.push(toPopulation(p, byPopulation.get(p.id) ?? []));
  return byOwner;
}

/** Populations (rows of one owner, in their order) with their items and active alarms: one round trip. */
export async function toPopulations(db: Database, rows: readonly PopulationRow[]): Promise<Population[]> {
  if (rows.length === 0) return [];
  const ids = JSON.stringify(rows.map((p) => p.id));
  const [items, alarms] = await db.batch<Record<string, unknown>>([
    db
      .prepare(
        `SELECT ${ITEM_COLUMNS} FROM population_items i WHERE i.population_id IN (SELECT value FROM json_each(?1))
          ORDER BY i.created_at, i.id`,
      )
      .bind(ids),
    activeAlarmsOfPopulationsStatement(
      db,
      rows.map((p) => p.id),
    ),
  ]);
  const byPopulation = itemsByPopulation((items?.results ?? []).map(itemRow), alarmsByItem((alarms?.results ?? []).map(activeAlarmRow)));
  return rows.map((p) => toPopulation(p, byPopulation.get(p.id) ?? []));
}

/** The population `populationId` of the owner, or a 404 naming where the id came from (`field`). */
export async function populationOfOwner(
  db: Database,
  kind: PopulationOwner,
  ownerId: string,
  populationId: string,
  field: string,
): Promise<PopulationRow> {
  const row = await db
    .prepare(`${SELECT_POPULATION} WHERE id = ?1 AND owner_kind = ?2 AND owner_id = ?3`)
    .bind(populationId, kind, ownerId)
    .first<Record<string, unknown>>();
  if (!row) throw new ApiError("NotFound", `Population ${populationId} does not belong to this ${kind} (${field}).`);
  return populationRow(row);
}

/** Whether the item belongs to one of the owner's populations. */
export async function ownerHasItem(db: Database, kind: PopulationOwner, ownerId: string, itemId: string): Promise<boolean> {
  const found = await db
    .prepare(
      "SELECT 1 AS ok FROM population_items WHERE id = ?1 AND population_id IN (SELECT id FROM populations WHERE " +
        "owner_kind = ?2 AND owner_id = ?3)",
    )
    .bind(itemId, kind, ownerId)
    .first();
  return found !== null;
}

/** Refuses (404) an item id that is not in one of the monitor's populations. */
export async function requireMonitorItem(db: Database, monitorId: string, itemId: string): Promise<void> {
  if (!(await ownerHasItem(db, "monitor", monitorId, itemId)))
    throw new ApiError("NotFound", `Population item ${itemId} of monitor ${monitorId} does not exist.`);
}

// --- Statements ------------------------------------------------------------------------------------

/** A new population of an owner. */
export function insertPopulationStatement(
  db: Database,
  population: { id: string; kind: PopulationOwner; ownerId: string; name: string; description: string | null; assetType: AssetType },
  now: string,
): D1PreparedStatement {
  const { id, kind, ownerId, name, description, assetType } = population;
  return populationTable.insert(db, { id, ownerKind: kind, ownerId, name, description, assetType, createdAt: now });
}

/** A population's name and description (its asset type and items stay). */
export function renamePopulationStatement(
  db: Database,
  id: string,
  fields: { name: string; description: string | null },
): D1PreparedStatement {
  return populationTable.update(db, { name: fields.name, description: fields.description }, { id });
}

/** Deletes a population; its items and their history go with it (ON DELETE CASCADE). */
export function deletePopulationStatement(db: Database, id: string): D1PreparedStatement {
  return populationTable.delete(db, { id });
}

/** Deletes the populations of an owner whose row is gone (put it after the owner's own delete, in the same batch). */
export function deleteOwnerPopulationsStatement(db: Database, kind: PopulationOwner, ownerId: string): D1PreparedStatement {
  // The guard reads the owner's table: a delete that did not happen (its version moved on) keeps them.
  return db
    .prepare(
      `DELETE FROM populations WHERE owner_kind = ?1 AND owner_id = ?2 AND NOT EXISTS (SELECT 1 FROM ${OWNER_TABLE[kind]} WHERE id = ?2)`,
    )
    .bind(kind, ownerId);
}

/** A new item of a population: an asset of the catalogue (its id and name as they are now). */
export function insertItemStatement(
  db: Database,
  item: { id: string; populationId: string; assetId: string; assetName: string | null },
  now: string,
): D1PreparedStatement {
  return itemTable.insert(db, { ...item, createdAt: now });
}

/** Deletes an item; its criticality history and alarms go with it (ON DELETE CASCADE). */
export function deleteItemStatement(db: Database, id: string): D1PreparedStatement {
  return itemTable.delete(db, { id });
}

/**
 * Statements copying every population and item of one owner to another (criticality and last job
 * cleared): one statement per table, any number of rows, hand-written since the rows are copied
 * inside SQLite. New ids keep the old ones' last 27 characters after fresh random ones, so each
 * copied item finds its copied population.
 */
export function copyPopulationsStatements(
  db: Database,
  from: { kind: PopulationOwner; id: string },
  to: { kind: PopulationOwner; id: string },
  now: string,
): D1PreparedStatement[] {
  return [
    db
      .prepare(
        `INSERT INTO populations (id, owner_kind, owner_id, name, description, asset_type, created_at)
         SELECT lower(hex(randomblob(4))) || '-' || substr(p.id, 10, 27), ?3, ?4, p.name, p.description, p.asset_type, ?5
         FROM populations p WHERE p.owner_kind = ?1 AND p.owner_id = ?2`,
      )
      .bind(from.kind, from.id, to.kind, to.id, now),
    db
      .prepare(
        `INSERT INTO population_items (id, population_id, asset_id, asset_name, created_at)
         SELECT lower(hex(randomblob(4))) || '-' || substr(i.id, 10, 27), np.id, i.asset_id, i.asset_name, ?5
         FROM population_items i JOIN populations p ON p.id = i.population_id
         JOIN populations np ON np.owner_kind = ?3 AND np.owner_id = ?4 AND substr(np.id, 10) = substr(p.id, 10)
         WHERE p.owner_kind = ?1 AND p.owner_id = ?2`,
      )
      .bind(from.kind, from.id, to.kind, to.id, now),
  ];
}

// --- A monitor's items: the assets it scores, their criticality -------------------------------------

/** Every distinct asset of the monitor's population items. */
const MONITOR_ASSETS = `SELECT DISTINCT i.asset_id FROM population_items i JOIN populations p ON p.id = i.population_id
  WHERE p.owner_kind = 'monitor' AND p.owner_id = ?1`;

/** How many distinct assets the monitor's items reference. */
export async function monitorAssetCount(db: Database, monitorRef: string): Promise<number> {
  const row = await db.prepare(`SELECT count(*) AS n FROM (${MONITOR_ASSETS})`).bind(monitorRef).first<{ n: number }>();
  return row?.n ?? 0;
}

/** One page of the monitor's distinct assets, by asset id. */
export async function monitorAssetPage(db: Database, monitorRef: string, skip: number, take: number): Promise<string[]> {
  const { results } = await db
    .prepare(`${MONITOR_ASSETS} ORDER BY i.asset_id LIMIT ?2 OFFSET ?3`)
    .bind(monitorRef, take, skip)
    .all<{ asset_id: string }>();
  return results.map((r) => r.asset_id);
}

/** Of `assetIds`, those no item of the monitor references (in their order, once each). */
export async function assetsOutsideMonitor(db: Database, monitorRef: string, assetIds: readonly string[]): Promise<string[]> {
  const asked = [...new Set(assetIds)];
  if (asked.length === 0) return [];
  const { results } = await db
    .prepare(`${MONITOR_ASSETS} AND i.asset_id IN (SELECT value FROM json_each(?2))`)
    .bind(monitorRef, JSON.stringify(asked))
    .all<{ asset_id: string }>();
  const known = new Set(results.map((r) => r.asset_id));
  return asked.filter((id) => !known.has(id));
}

/** An item of a monitor as the monitoring loop evaluates it: the item and its population's asset type. */
export interface MonitorItem {
  id: string;
  populationId: string;
  assetId: string;
  assetName: string | null;
  assetType: AssetType;
}

/** The monitor's items with their populations' asset types (read it in the evaluation's batch; map with {@link monitorItemOf}). */
export function monitorItemsStatement(db: Database, monitorRef: string): D1PreparedStatement {
  return db
    .prepare(
      `SELECT ${ITEM_COLUMNS}, p.asset_type AS population_asset_type FROM population_items i JOIN populations p ON p.id = i.population_id
        WHERE p.owner_kind = 'monitor' AND p.owner_id = ?1`,
    )
    .bind(monitorRef);
}

/** One item of a monitor with its population's asset type (map it with {@link monitorItemOf}). */
export function monitorItemStatement(db: Database, itemId: string): D1PreparedStatement {
  return db
    .prepare(
      `SELECT ${ITEM_COLUMNS}, p.asset_type AS population_asset_type FROM population_items i JOIN populations p ON p.id = i.population_id
        WHERE i.id = ?1`,
    )
    .bind(itemId);
}

export function monitorItemOf(raw: Record<string, unknown>): MonitorItem {
  const item = itemRow(raw);
  return {
    id: item.id,
    populationId: item.populationId,
    assetId: item.assetId,
    assetName: item.assetName,
    assetType: storedEnum(ASSET_TYPES, String(raw.population_asset_type), "populations.asset_type"),
  };
}

/**
 * Criticality a model reported for a monitor's assets: each value on the monitor's items of that
 * asset, with their last monitor job, and one history entry per item and job (the first value
 * reported in the job is kept there). Two statements per report.
 */
export function reportedCriticalityStatements(
  db: Database,
  monitorRef: string,
  monitorJobId: string,
  reports: readonly { assetId: string; criticality: number }[],
  now: string,
): D1PreparedStatement[] {
  return reports.flatMap((r) => [
    db
      .prepare(
        `INSERT OR IGNORE INTO criticality_history (id, item_id, monitor_job_id, criticality, recorded_at)
         SELECT lower(hex(randomblob(16))), i.id, ?1, ?2, ?3 FROM population_items i JOIN populations p ON p.id = i.population_id
         WHERE p.owner_kind = 'monitor' AND p.owner_id = ?4 AND i.asset_id = ?5`,
      )
      .bind(monitorJobId, r.criticality, now, monitorRef, r.assetId),
    db
      .prepare(
        `UPDATE population_items SET criticality = ?1, last_monitor_job_id = ?2
         WHERE asset_id = ?3 AND population_id IN (SELECT id FROM populations WHERE owner_kind = 'monitor' AND owner_id = ?4)`,
      )
      .bind(r.criticality, monitorJobId, r.assetId, monitorRef),
  ]);
}

/**
 * Criticality the monitoring loop sets on items (a controller's setCriticality): rows `{ id, item,
 * value }` (`id` the history entry's), as JSON rows; the value replaces what the job's model
 * reported for the item, in the item and in its history.
 */
export function alarmCriticalityStatements(
  db: Database,
  rows: readonly { id: string; item: string; value: number }[],
  monitorJobId: string,
  now: string,
): D1PreparedStatement[] {
  if (rows.length === 0) return [];
  return [
    ...jsonRowStatements(
      db,
      `UPDATE population_items SET criticality = (SELECT json_extract(j.value, '$.value') FROM json_each(?1) j WHERE
      json_extract(j.value, '$.item') = population_items.id), last_monitor_job_id = ?2
        WHERE id IN (SELECT json_extract(value, '$.item') FROM json_each(?1))`,
      rows,
      monitorJobId,
    ),
    ...jsonRowStatements(
      db,
      `INSERT INTO criticality_history (id, item_id, monitor_job_id, criticality, recorded_at)
       SELECT json_extract(value, '$.id'), json_extract(value, '$.item'), ?2, json_extract(value, '$.value'), ?3 FROM
       json_each(?1) WHERE true
       ON CONFLICT (item_id, monitor_job_id) DO UPDATE SET criticality = excluded.criticality`,
      rows,
      monitorJobId,
      now,
    ),
  ];
}

/** The criticality values reported for an item, newest first, with their bands. */
export async function criticalityHistoryOf(db: Database, itemId: string, skip: number, take: number) {
  const { results } = await db
    .prepare(
      `SELECT ${criticalityTable.columns} FROM criticality_history WHERE item_id = ?1 ORDER BY recorded_at DESC, id LIMIT ?2 OFFSET ?3`,
    )
    .bind(itemId, take, skip)
    .all<Record<string, unknown>>();
  return results.map(criticalityTable.row).map((r) => ({
    monitorJobId: r.monitorJobId,
    criticality: r.criticality,
    band: bandOf(r.criticality)!,
    recordedAt: r.recordedAt,
  }));
}

/** Items of monitors as GET /Monitors/PopulationItems shows them (table 4.2), from its list's rows, each with its active alarms. */
export async function toMonitorItemViews(db: Database, rows: readonly Record<string, unknown>[]) {
  const items = rows.map((raw) => ({
    item: itemRow(raw),
    populationName: String(raw.population_name),
    assetType: storedEnum(ASSET_TYPES, String(raw.asset_type), "populations.asset_type"),
    monitorRef: String(raw.monitor_ref),
    monitorName: String(raw.monitor_name),
  }));
  const alarms = await activeAlarmsOfItems(
    db,
    items.map((r) => r.item.id),
  );
  return items.map(({ item, populationName, assetType, monitorRef, monitorName }) => ({
    id: item.id,
    monitor: { id: monitorRef, name: monitorName },
    population: { id: item.populationId, name: populationName },
    assetReference: { id: item.assetId, name: item.assetName },
    type: assetType,
    criticality: item.criticality,
    band: bandOf(item.criticality),
    lastMonitorJobId: item.lastMonitorJobId,
    alarms: alarms.get(item.id) ?? [],
  }));
}
