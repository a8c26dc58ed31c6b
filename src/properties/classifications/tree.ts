/**
 * The classification element tree: its limits, the checks zod cannot express, and the conversion
 * between the nested API form and the flat rows of classification_elements.
 */
import type { z } from "@hono/zod-openapi";
import type { ClassificationElement, ClassificationElementInput } from "./schema";

/** Deepest nesting accepted: a root element is at depth 1. */
export const MAX_ELEMENT_DEPTH = 10;
/** Most elements in one classification, counted over the whole tree. */
export const MAX_ELEMENTS = 2000;

type Ctx = z.core.$RefinementCtx;
type Path = (string | number)[];

/**
 * Field paths in problems use the same dotted form as the validation hook
 * (`body.elements.0.children.1.name`), so one response never mixes two notations.
 */
export function fieldPath(path: Path): string {
  return path.map(String).join(".");
}

/**
 * Runs on the raw `elements` input before the recursive parse, walking it with an explicit stack so a
 * hostile, very deep body cannot exhaust the call stack. Leaves the value unchanged; anything that is
 * not an array of objects is left for the schema to report.
 */
export function checkTreeShape(input: unknown, ctx: Ctx): unknown {
  if (!Array.isArray(input)) return input;
  const stack: { items: unknown[]; path: Path; depth: number }[] = [{ items: input, path: [], depth: 1 }];
  let count = 0;
  while (stack.length > 0) {
    const { items, path, depth } = stack.pop()!;
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      count++;
      if (depth > MAX_ELEMENT_DEPTH) {
        const message = `Elements nest at most ${MAX_ELEMENT_DEPTH} levels deep.`;
        ctx.addIssue({ code: "custom", path: [...path, i], message, params: { rule: "maxDepth" } });
        return input;
      }
      if (count > MAX_ELEMENTS) {
        const message = `A classification has at most ${MAX_ELEMENTS} elements.`;
        ctx.addIssue({ code: "custom", path: [], message, params: { rule: "maxElements" } });
        return input;
      }
      const children = typeof item === "object" && item !== null ? (item as { children?: unknown }).children : undefined;
      if (Array.isArray(children)) stack.push({ items: children, path: [...path, i, "children"], depth: depth + 1 });
    }
  }
  return input;
}

/**
 * Element names are the values classification properties store, so they are unique in the whole
 * tree, not only among siblings. Compared case-insensitively: 'Low' and 'low' would read as one
 * value to people and filters alike.
 */
export function checkUniqueElementNames(elements: ClassificationElementInput[], ctx: Ctx): void {
  const seen = new Map<string, Path>();
  for (const { element, path } of walk(elements)) {
    const key = element.name.toLowerCase();
    const first = seen.get(key);
    if (first) {
      const message =
        `The element name '${element.name}' is already used at body.elements.${fieldPath(first)}; names are unique ` +
        `within a classification.`;
      ctx.addIssue({ code: "custom", path: [...path, "name"], message, params: { rule: "unique" } });
    } else {
      seen.set(key, path);
    }
  }
}

function* walk(elements: ClassificationElementInput[], path: Path = []): Generator<{ element: ClassificationElementInput; path: Path }> {
  for (let i = 0; i < elements.length; i++) {
    const element = elements[i]!;
    yield { element, path: [...path, i] };
    yield* walk(element.children, [...path, i, "children"]);
  }
}

/** One row of classification_elements, in API field names. */
export interface ElementRow {
  id: string;
  parentId: string | null;
  position: number;
  name: string;
  displayName: string | null;
  code: string | null;
  applierCode: string | null;
  color: string | null;
  order: number | null;
  grade: number | null;
}

/** Flattens the tree parents-first (a parent's row precedes its children's), minting element ids. */
export function flattenTree(elements: ClassificationElementInput[], newId: () => string): ElementRow[] {
  const rows: ElementRow[] = [];
  const visit = (items: ClassificationElementInput[], parentId: string | null) => {
    items.forEach((element, position) => {
      const id = newId();
      rows.push({
        id,
        parentId,
        position,
        name: element.name,
        displayName: element.displayName ?? null,
        code: element.code ?? null,
        applierCode: element.applierCode ?? null,
        color: element.color ?? null,
        order: element.order ?? null,
        grade: element.grade ?? null,
      });
      visit(element.children, id);
    });
  };
  visit(elements, null);
  return rows;
}

/** Rebuilds the nested form; siblings come back in the order they were written. */
export function buildTree(rows: readonly ElementRow[]): ClassificationElement[] {
  const byParent = new Map<string | null, ElementRow[]>();
  for (const row of rows) {
    const siblings = byParent.get(row.parentId);
    if (siblings) siblings.push(row);
    else byParent.set(row.parentId, [row]);
  }
  const build = (parentId: string | null): ClassificationElement[] =>
    (byParent.get(parentId) ?? [])
      .sort((a, b) => a.position - b.position)
      .map((row) => ({
        name: row.name,
        displayName: row.displayName,
        code: row.code,
        applierCode: row.applierCode,
        color: row.color,
        order: row.order,
        grade: row.grade,
        children: build(row.id),
      }));
  return build(null);
}
