/** The kinds of record an import writes: each its own module (./kind.ts says what one provides). */
import type { ImportKindName } from "../schema";
import { assets } from "./assets";
import { deviations } from "./deviations";
import type { ImportKind } from "./kind";
import { propertyValues } from "./property-values";
import { readings } from "./readings";
import { workItems } from "./work-items";

export const IMPORT_KIND_HANDLERS: Record<ImportKindName, ImportKind> = {
  deviations: deviations as ImportKind,
  assets: assets as ImportKind,
  propertyValues: propertyValues as ImportKind,
  readings: readings as ImportKind,
  workItems: workItems as ImportKind,
};

export const importKind = (name: string): ImportKind => {
  const kind = IMPORT_KIND_HANDLERS[name as ImportKindName];
  if (!kind) throw new Error(`unknown import kind ${name}`);
  return kind;
};
