/**
 * Validation of the fields a work item write sets (everything but basedOn): status, dueDate, owner,
 * type and its WorkItem properties, designations, tags. Every field's problems are reported together.
 */
import { DEFAULT_ENTITY_TYPE_ID } from "../properties/entity-types/schema";
import { resolveDesignations, type AssetRef } from "../assets/designations";
export { readDesignationsSorted as readableDesignations } from "./designation-order";
import { ApiError, type FieldProblem } from "../pkg/errors";
import type { WriteContext } from "../pkg/db";
import { resolveLinkedValues, toPropertyValueRows, type PropertyValueRow, type ResolvedProperty } from "../properties/values";
import { checkStatus, DEFAULT_STATUS, normaliseTags, ownerOrCaller, type Person } from "../work/common";
import type { CreateWorkItemInput } from "./schema";
import { toUtcDateTime } from "./dates";
import type { WorkItemRow } from "./store";

export interface WorkItemFields {
  status: string;
  dueDate: string | null;
  owner: Person;
  typeId: string;
  properties: ResolvedProperty[];
  designations: AssetRef[];
  tags: string[];
}

/** Collects the ValidationFailed problems of several checks, so one response lists them all. */
async function settle<T>(check: Promise<T>, problems: FieldProblem[]): Promise<T | undefined> {
  try {
    return await check;
  } catch (error) {
    if (error instanceof ApiError && error.code === "ValidationFailed" && error.errors) {
      problems.push(...error.errors);
      return undefined;
    }
    throw error;
  }
}

/** Checks the fields of a create (`current` null) or an update; omitted optional fields keep their current value. */
export async function checkWorkItemFields(
  ctx: WriteContext,
  input: Omit<CreateWorkItemInput, "basedOn">,
  current: WorkItemRow | null,
): Promise<WorkItemFields> {
  const db = ctx.db;
  const problems: FieldProblem[] = [];
  const typeId = input.typeId?.toLowerCase() ?? current?.type_id ?? DEFAULT_ENTITY_TYPE_ID;
  const [status, properties, designations] = await Promise.all([
    settle(checkStatus(db, input.status ?? current?.status ?? DEFAULT_STATUS), problems),
    settle(
      resolveLinkedValues(db, {
        entityTypeId: typeId,
        applicationRule: "WorkItem",
        values: input.properties,
        field: "body.properties",
        entityTypeField: "body.typeId",
      }),
      problems,
    ),
    settle(
      resolveDesignations(
        db,
        input.designations.map((d, i) => ({ id: d.id, field: `body.designations.${i}.id` })),
      ),
      problems,
    ),
  ]);
  let dueDate: string | null = null;
  try {
    dueDate = toUtcDateTime(input.dueDate, "body.dueDate");
  } catch (error) {
    if (error instanceof ApiError && error.errors) problems.push(...error.errors);
    else throw error;
  }
  if (problems.length > 0 || status === undefined || properties === undefined || designations === undefined) {
    throw new ApiError("ValidationFailed", problems.map((p) => `${p.field}: ${p.message}`).join("; "), { errors: problems });
  }
  const caller = ctx.actorId === null ? null : { id: ctx.actorId, name: ctx.actorName ?? "" };
  const owner =
    input.objectOwner || !current ? ownerOrCaller(input.objectOwner, caller) : { id: current.owner_id, name: current.owner_name };
  return { status, dueDate, owner, typeId, properties, designations, tags: normaliseTags(input.tags) };
}

export function propertyRows(workItemId: string, fields: WorkItemFields): PropertyValueRow[] {
  return toPropertyValueRows("workItem", workItemId, fields.properties);
}

/** The properties as a read returns them: stored (non-null) values ordered by name. */
export function readableProperties(fields: WorkItemFields): { name: string; value: unknown }[] {
  return fields.properties
    .filter((p) => p.value !== null)
    .map((p) => ({ name: p.name, value: p.value }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
