/**
 * The read side other modules use: property definitions check a classification default against it,
 * linked values check that a value names an element, and ordering reads element fields.
 */
import type { Database } from "../../db/statements";
import type { ElementRow } from "./tree";
import { readClassification } from "./store";

/** One element of a classification, flattened, with where it sits in the tree. */
export interface ClassificationElementRecord {
  name: string;
  displayName: string | null;
  code: string | null;
  applierCode: string | null;
  color: string | null;
  order: number | null;
  grade: number | null;
  /** The parent's name, or null for a root element. */
  parentName: string | null;
  /** Names from the root down to this element, e.g. ['Corrosion', 'Pitting']. */
  path: string[];
  /** 1 for a root element. */
  depth: number;
}

export interface ClassificationElements {
  /** Every element, parents before children, siblings in their written order. */
  elements: readonly ClassificationElementRecord[];
  /** The element with exactly this name (names are what classification values store). */
  findElement(name: string): ClassificationElementRecord | undefined;
}

/**
 * Loads the elements of a classification as a flat list, or null when the classification does not
 * exist. Element names are unique in a classification (case-insensitively), so findElement is exact.
 */
export async function loadClassificationElements(db: Database, classificationId: string): Promise<ClassificationElements | null> {
  const found = await readClassification(db, classificationId);
  if (!found) return null;
  const elements = flatten(found.elements);
  const byName = new Map(elements.map((e) => [e.name, e]));
  return { elements, findElement: (name) => byName.get(name) };
}

function flatten(rows: readonly ElementRow[]): ClassificationElementRecord[] {
  const children = new Map<string | null, ElementRow[]>();
  for (const row of rows) {
    const siblings = children.get(row.parentId);
    if (siblings) siblings.push(row);
    else children.set(row.parentId, [row]);
  }
  const out: ClassificationElementRecord[] = [];
  const visit = (parent: ElementRow | null, path: string[]) => {
    const siblings = (children.get(parent?.id ?? null) ?? []).sort((a, b) => a.position - b.position);
    for (const row of siblings) {
      const own = [...path, row.name];
      out.push({
        name: row.name,
        displayName: row.displayName,
        code: row.code,
        applierCode: row.applierCode,
        color: row.color,
        order: row.order,
        grade: row.grade,
        parentName: parent?.name ?? null,
        path: own,
        depth: own.length,
      });
      visit(row, own);
    }
  };
  visit(null, []);
  return out;
}
