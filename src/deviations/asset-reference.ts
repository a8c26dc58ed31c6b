/**
 * A deviation's assetReference: a main system, a design object and/or equipment, stored as
 * designations (entity_kind deviation). They must describe one place: equipment and a design
 * object belong to the main system when one is given (their parent is it), and all belong to one
 * plant, which is derived and read-only.
 */
import type { Database } from "../db/statements";
import { resolveDesignations, type AssetRef, type DesignationKind, type RequestedAsset } from "../assets/designations";
import { ApiError, type FieldProblem } from "../pkg/errors";
import type { Deviation } from "./schema";

type Slot = "mainSystem" | "designObject" | "equipment";
const SLOTS: readonly Slot[] = ["mainSystem", "designObject", "equipment"];

export type AssetReferenceInput = Record<Slot, { id: string } | null>;

export function emptyAssetReference(): Deviation["assetReference"] {
  return { mainSystem: null, designObject: null, equipment: null, plant: null };
}

/** The read shape from a deviation's designated assets. */
export function toAssetReference(refs: readonly AssetRef[]): Deviation["assetReference"] {
  const reference = emptyAssetReference();
  for (const ref of refs) {
    if (ref.kind === "mainSystem" || ref.kind === "designObject" || ref.kind === "equipment") reference[ref.kind] = ref;
  }
  // A plant designated directly (a deviation a monitor raised on a Plant item, issue 25) is the plant too.
  const direct = refs.find((ref) => ref.kind === "plant");
  reference.plant =
    SLOTS.map((slot) => reference[slot]?.plant).find((plant) => plant) ?? (direct ? { id: direct.id, name: direct.name } : null);
  return reference;
}

/**
 * Validates the requested assets (exist, right kind, consistent); returns them in slot order, or
 * throws one ValidationFailed listing every problem.
 */
export async function resolveAssetReference(db: Database, input: AssetReferenceInput): Promise<AssetRef[]> {
  const requested: RequestedAsset[] = SLOTS.flatMap((slot) => {
    const given = input[slot];
    return given ? [{ id: given.id, field: `body.assetReference.${slot}.id`, kind: slot as DesignationKind }] : [];
  });
  const refs = await resolveDesignations(db, requested);
  if (refs.length < 2) return refs;
  const { results } = await db
    .prepare("SELECT id, parent_id FROM assets WHERE id IN (SELECT value FROM json_each(?1))")
    .bind(JSON.stringify(refs.map((r) => r.id)))
    .all<{ id: string; parent_id: string | null }>();
  const parentOf = new Map(results.map((r) => [r.id, r.parent_id]));
  const bySlot = new Map(refs.map((r) => [r.kind, r]));
  const errors: FieldProblem[] = [];
  const mainSystem = bySlot.get("mainSystem");
  for (const slot of ["designObject", "equipment"] as const) {
    const ref = bySlot.get(slot);
    if (!ref) continue;
    const field = `body.assetReference.${slot}.id`;
    if (mainSystem && parentOf.get(ref.id) !== mainSystem.id) {
      errors.push({ field, rule: "belongsTo", message: `'${ref.name}' does not belong to the main system '${mainSystem.name}'.` });
    } else if (ref.plant?.id !== refs[0]!.plant?.id) {
      errors.push({ field, rule: "samePlant", message: `'${ref.name}' belongs to another plant than '${refs[0]!.name}'.` });
    }
  }
  if (errors.length > 0) throw new ApiError("ValidationFailed", errors.map((e) => `${e.field}: ${e.message}`).join("; "), { errors });
  return refs;
}
