/**
 * Controllers (spec 2.8, issue 25): when one holds for a population item, and what its alarm does.
 *
 * A controller holds for an item when every condition holds on the variables the model reported
 * for the item's asset (operators of 2.8, `GreaterThen` as the spec spells it). A condition whose
 * variable was not reported does not hold, unless the controller says `alarmOnNoData`: then a missing
 * variable is itself an alarm. A controller without conditions never holds.
 *
 * The optional actions (raiseDeviation, createWorkItem, setCriticality, onLeave.deviationStatus) are
 * checked when the monitor is saved (a 400 naming the field) and again when an alarm is entered, since
 * a type, status or template may have changed since; then an action that no longer fits is skipped and
 * named in the monitor job's error message, and the alarm is entered all the same.
 */
import type { Database } from "../../db/statements";
import { ApiError, type FieldProblem } from "../../pkg/errors";
import { checkStatus, DEFAULT_STATUS } from "../../work/common";
import { checkLinkedValues } from "../../properties/values";
import type { ResolvedProperty } from "../../properties/values";
import { DEFAULT_ENTITY_TYPE_ID } from "../../properties/entity-types/schema";
import { IS_DEVIATION_TYPE } from "../../deviations/types/store";
import { DEVIATION_RULE } from "../../deviations/store";
import type { Controller } from "./schema";

/** One condition with the value the model reported (null: not reported) and whether it held. */
export interface ConditionSeen {
  variableName: string;
  operator: string;
  comparisonValue: number;
  /** The condition's deadband, when it has one: an active alarm's condition held within it (issue 33). */
  deadband?: number;
  value: number | null;
  holds: boolean;
}

/**
 * Whether `value` is past `limit`. For an active alarm the limit moves towards normal by `deadband`
 * (hysteresis, issue 33): it keeps holding until the value is clearly back, so a value hovering at
 * the limit does not enter and leave the alarm at every evaluation.
 */
function conditionHolds(operator: string, value: number, limit: number, deadband: number): boolean {
  switch (operator) {
    case "LessThan":
      return value < limit + deadband;
    case "LessThanOrEqual":
      return value <= limit + deadband;
    case "GreaterThen":
    case "GreaterThan":
      return value > limit - deadband;
    case "GreaterThanOrEqual":
      return value >= limit - deadband;
    case "Equal":
      return Math.abs(value - limit) <= deadband;
    default:
      return false;
  }
}

/**
 * Whether `controller` holds on one asset's reported variables (see the module comment); `active`:
 * whether the alarm is active now, so a condition's deadband applies.
 */
export function controllerHolds(controller: Controller, variables: ReadonlyMap<string, number> | undefined, active = false): boolean {
  const conditions = controller.conditions;
  if (conditions.length === 0) return false;
  let missing = false;
  let all = true;
  for (const c of conditions) {
    const value = variables?.get(c.variableName);
    if (value === undefined) missing = true;
    else if (all && !conditionHolds(c.operator, value, c.comparisonValue, active ? (c.deadband ?? 0) : 0)) all = false;
  }
  if (missing) return controller.alarmOnNoData === true;
  return all;
}

/** The conditions with the values seen: what decided an alarm, as recorded and described (`active` as for {@link controllerHolds}). */
export function conditionsSeen(
  controller: Controller | null,
  variables: ReadonlyMap<string, number> | undefined,
  active = false,
): ConditionSeen[] {
  return (controller?.conditions ?? []).map((c) => {
    const value = variables?.get(c.variableName);
    return {
      variableName: c.variableName,
      operator: c.operator,
      comparisonValue: c.comparisonValue,
      ...(c.deadband ? { deadband: c.deadband } : {}),
      value: value ?? null,
      holds: value !== undefined && conditionHolds(c.operator, value, c.comparisonValue, active ? (c.deadband ?? 0) : 0),
    };
  });
}

/** "vibration GreaterThen 7.1: 9.4 seen; temperature LessThan 80: not reported" */
export function describeConditions(seen: readonly ConditionSeen[]): string {
  return seen
    .map((c) => `${c.variableName} ${c.operator} ${c.comparisonValue}: ${c.value === null ? "not reported" : `${c.value} seen`}`)
    .join("; ");
}

/** The actions of a controller, checked and resolved against the catalogue as it is now. */
export interface PreparedActions {
  deviation: { typeId: string; typeName: string; status: string; properties: ResolvedProperty[] } | null;
  workTemplateId: string | null;
  criticality: number | null;
  leaveStatus: string | null;
  problems: FieldProblem[];
}

/** Runs a check that throws ValidationFailed, collecting its problems instead. */
async function collect<T>(problems: FieldProblem[], check: () => Promise<T>): Promise<T | undefined> {
  try {
    return await check();
  } catch (error) {
    if (error instanceof ApiError && (error.code === "ValidationFailed" || error.code === "ExpressionFailed") && error.errors) {
      problems.push(...error.errors);
      return undefined;
    }
    throw error;
  }
}

/**
 * Checks and resolves one controller's actions; `field` is where the controller is in the request
 * (`body.controllers.2`). Problems are returned, not thrown, so a save lists them all and an
 * evaluation can skip what no longer fits.
 */
export async function prepareActions(db: Database, controller: Controller, field: string): Promise<PreparedActions> {
  const problems: FieldProblem[] = [];
  const actions = controller.actions ?? {};
  let deviation: PreparedActions["deviation"] = null;
  if (actions.raiseDeviation) {
    const given = actions.raiseDeviation;
    const base = `${field}.actions.raiseDeviation`;
    const typeId = (given.typeId ?? DEFAULT_ENTITY_TYPE_ID).toLowerCase();
    const type = await db
      .prepare(`SELECT t.name FROM entity_types t WHERE t.id = ?1 AND ${IS_DEVIATION_TYPE}`)
      .bind(typeId)
      .first<{ name: string }>();
    if (!type)
      problems.push({ field: `${base}.typeId`, rule: "exists", message: `${typeId} is not a deviation type (GET /DeviationTypes).` });
    const status = await collect(problems, () => checkStatus(db, given.status ?? DEFAULT_STATUS, `${base}.status`));
    let properties: ResolvedProperty[] | undefined;
    if (type) {
      const checked = await checkLinkedValues(db, {
        entityTypeId: typeId,
        applicationRule: DEVIATION_RULE,
        values: given.properties ?? [],
        field: `${base}.properties`,
        entityTypeField: `${base}.typeId`,
      });
      if (checked.ok) properties = checked.properties;
      else problems.push(...checked.errors);
    }
    if (type && status !== undefined && properties) deviation = { typeId, typeName: type.name, status, properties };
  }
  let workTemplateId: string | null = null;
  if (actions.createWorkItem) {
    const id = actions.createWorkItem.workTemplateId.toLowerCase();
    const found = await db.prepare("SELECT 1 AS found FROM work_templates WHERE id = ?1 AND is_latest = 1").bind(id).first();
    if (found) workTemplateId = id;
    else
      problems.push({
        field: `${field}.actions.createWorkItem.workTemplateId`,
        rule: "exists",
        message: `The work template ${id} does not exist.`,
      });
  }
  let leaveStatus: string | null = null;
  if (controller.onLeave?.deviationStatus !== undefined) {
    leaveStatus =
      (await collect(problems, () => checkStatus(db, controller.onLeave!.deviationStatus!, `${field}.onLeave.deviationStatus`))) ?? null;
  }
  return { deviation, workTemplateId, criticality: actions.setCriticality?.value ?? null, leaveStatus, problems };
}

/**
 * A monitor's controllers as saved: names unique (an alarm is kept per item and controller name) and
 * every action fitting the catalogue. Throws one ValidationFailed listing every problem.
 */
export async function checkControllers(db: Database, controllers: readonly Controller[], field = "body.controllers"): Promise<void> {
  const problems: FieldProblem[] = [];
  const seen = new Set<string>();
  for (const [i, controller] of controllers.entries()) {
    if (seen.has(controller.name))
      problems.push({
        field: `${field}.${i}.name`,
        rule: "unique",
        message:
          `Another controller of this monitor is named '${controller.name}'; alarms are kept per controller name, so ` +
          `names are unique.`,
      });
    seen.add(controller.name);
    if (controller.actions || controller.onLeave) problems.push(...(await prepareActions(db, controller, `${field}.${i}`)).problems);
  }
  if (problems.length > 0)
    throw new ApiError("ValidationFailed", problems.map((p) => `${p.field}: ${p.message}`).join("; "), { errors: problems });
}
