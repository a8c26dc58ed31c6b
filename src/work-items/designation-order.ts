/** Designations in the order reads return them (kind, name, id), so a write's response equals a later read. */
import type { AssetRef } from "../assets/designations";

export function readDesignationsSorted(refs: readonly AssetRef[]): AssetRef[] {
  const key = (r: AssetRef): string[] => [r.kind, r.name, r.id];
  return [...refs].sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    for (let i = 0; i < x.length; i++) {
      const [p, q] = [x[i] ?? "", y[i] ?? ""];
      if (p !== q) return p < q ? -1 : 1;
    }
    return 0;
  });
}
