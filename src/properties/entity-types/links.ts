/**
 * Which property definitions an entity type may link: each must exist, appear once, and fit the
 * type's application rule; at most one may be the display name field.
 */
import type { Database } from "../../db/statements";
import { ApiError, type FieldProblem } from "../../pkg/errors";
import { parseJson } from "../../pkg/db";
import type { ApplicationRule } from "../definitions/rules";
import type { LinkedDefinition } from "./schema";

/** What an entity type shows of a linked definition, plus the definition's etag. */
export interface DefinitionLinkRow {
  id: string;
  name: string;
  format: LinkedDefinition["format"];
  application_rule: LinkedDefinition["applicationRule"];
  required: number;
  etag: string;
}

interface DefinitionRow extends DefinitionLinkRow {
  metadata: string | null;
}

/**
 * The application rules a type with `appliesTo` may link. A deviation type links its own
 * deviationType definitions (values the type itself carries) and the Deviation definitions its
 * deviations carry; every other rule links only itself.
 */
export function linkableRules(appliesTo: ApplicationRule): readonly ApplicationRule[] {
  return appliesTo === "deviationType" ? ["deviationType", "Deviation"] : [appliesTo];
}

/**
 * Checks the requested links (lower-case definition ids in order) and returns the definitions in that
 * order, or throws one ValidationFailed listing every problem. `appliesTo` null (the default type)
 * accepts definitions of any application rule.
 */
export async function checkLinks(db: Database, appliesTo: ApplicationRule | null, ids: readonly string[]): Promise<DefinitionLinkRow[]> {
  if (ids.length === 0) return [];
  // The ids travel as one JSON parameter, so the list length never meets D1's parameter limit.
  const { results } = await db
    .prepare(
      "SELECT id, name, format, application_rule, required, metadata, etag FROM property_definitions WHERE id IN " +
        "(SELECT value FROM json_each(?1))",
    )
    .bind(JSON.stringify(ids))
    .all<DefinitionRow>();
  const byId = new Map(results.map((r) => [r.id, r]));
  const errors: FieldProblem[] = [];
  const seen = new Set<string>();
  let displayNameField: DefinitionRow | undefined;
  const linked: DefinitionLinkRow[] = [];
  ids.forEach((id, index) => {
    const field = `body.propertyDefinitions.${index}.id`;
    const definition = byId.get(id);
    if (seen.has(id)) {
      errors.push({ field, rule: "unique", message: `The property definition ${id} is linked more than once.` });
      return;
    }
    seen.add(id);
    if (!definition) {
      errors.push({ field, rule: "exists", message: `The property definition ${id} does not exist.` });
      return;
    }
    if (appliesTo !== null && !linkableRules(appliesTo).includes(definition.application_rule)) {
      errors.push({
        field,
        rule: "applicationRule",
        message:
          `The property definition '${definition.name}' has the application rule ${definition.application_rule}; this ` +
          `type links only ${linkableRules(appliesTo).join(" or ")} definitions.`,
      });
      return;
    }
    if (isDisplayNameField(definition.metadata)) {
      if (displayNameField) {
        errors.push({
          field,
          rule: "displayNameField",
          message:
            `Only one linked definition may be the display name field (metadata.displayNameField = true); ` +
            `'${displayNameField.name}' already is, so '${definition.name}' cannot be.`,
        });
      } else {
        displayNameField = definition;
      }
    }
    const { metadata: _metadata, ...link } = definition;
    linked.push(link);
  });
  if (errors.length > 0) throw new ApiError("ValidationFailed", errors.map((e) => `${e.field}: ${e.message}`).join("; "), { errors });
  return linked;
}

function isDisplayNameField(metadata: string | null): boolean {
  try {
    return parseJson<{ displayNameField?: unknown }>(metadata)?.displayNameField === true;
  } catch {
    return false;
  }
}
