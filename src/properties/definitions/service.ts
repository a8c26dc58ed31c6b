/** The verbs of property definitions: validate, check usage and concurrency, then write. */
import { ApiError } from "../../pkg/errors";
import { linkableRules } from "../entity-types/links";
import type { ApplicationRule } from "./rules";
import { conflict, type WriteContext } from "../../pkg/db";
import type { CreatePropertyDefinition, PropertyDefinition, UpdatePropertyDefinition } from "./schema";
import { definitionUsage, deleteDefinitionRow, getDefinition, insertDefinition, updateDefinitionRow } from "./store";
import type { Versioned } from "../../pkg/resource";
import { validateDefinition } from "./validate";
import { assertVersion, retryWrite } from "../../pkg/resource";

export async function createPropertyDefinition(ctx: WriteContext, input: CreatePropertyDefinition): Promise<Versioned<PropertyDefinition>> {
  const fields = await validateDefinition(ctx.db, input);
  return insertDefinition(ctx, fields);
}

/**
 * Replaces a definition (whole object). While values are stored for it, the fields that decide how
 * values are typed and stored (format, classification, entityType, isMultiselect) cannot change:
 * the stored values would no longer fit. While entity types link it, the application rule can change
 * only to one every linking type accepts.
 */
export async function updatePropertyDefinition(ctx: WriteContext, input: UpdatePropertyDefinition): Promise<Versioned<PropertyDefinition>> {
  return retryWrite(ctx, async () => {
    const current = await getDefinition(ctx.db, input.id);
    assertVersion(ctx, current.etag);
    const fields = await validateDefinition(ctx.db, input, current.value.name);

    const before = current.value;
    const shapeChanges = [
      ["format", before.format !== fields.format],
      ["classification", (before.classification?.id ?? null) !== (fields.classification?.id ?? null)],
      ["entityType", before.entityType !== fields.entityType],
      ["isMultiselect", before.isMultiselect !== fields.isMultiselect],
    ].filter(([, changed]) => changed);
    const ruleChanged = before.applicationRule !== fields.applicationRule;
    if (shapeChanges.length > 0 || ruleChanged) {
      const usage = await definitionUsage(ctx.db, before.id);
      if (shapeChanges.length > 0 && usage.values > 0) {
        const message = "Values are stored for this property, so how its values are typed cannot change.";
        throw conflict(
          message,
          shapeChanges.map(([field]) => ({ field: `body.${String(field)}`, rule: "inUse", message })),
        );
      }
      // A deviation type links both deviationType and Deviation definitions, so moving between those two is fine.
      const refusing = usage.typeRules.filter(
        (rule) => !linkableRules(rule as ApplicationRule).includes(fields.applicationRule as ApplicationRule),
      );
      if (ruleChanged && refusing.length > 0) {
        const message =
          `Entity types that accept only ${refusing.join(", ")} properties link this property; unlink it before changing ` +
          `its application rule.`;
        throw conflict(message, [{ field: "body.applicationRule", rule: "inUse", message }]);
      }
    }
    return updateDefinitionRow(ctx, current, fields);
  });
}

/** Deletes a definition that no entity type links and no stored value uses. */
export async function deletePropertyDefinition(ctx: WriteContext, id: string): Promise<void> {
  return retryWrite(ctx, async () => {
    const current = await getDefinition(ctx.db, id);
    assertVersion(ctx, current.etag);
    const usage = await definitionUsage(ctx.db, id);
    if (usage.linkedTypes > 0 || usage.values > 0) {
      const uses = [
        usage.linkedTypes > 0 ? `${usage.linkedTypes} entity type(s) link it` : "",
        usage.values > 0 ? "entities hold values of it" : "",
      ];
      throw new ApiError("InUse", `The property definition is in use: ${uses.filter(Boolean).join(" and ")}.`);
    }
    await deleteDefinitionRow(ctx, current);
  });
}
