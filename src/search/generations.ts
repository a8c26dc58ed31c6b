/** The tables of one generation of an index's documents (names built from an integer, never from input). */
export function generationTables(generation: number): { docs: string; fts: string } {
  if (!Number.isSafeInteger(generation) || generation < 1) throw new RangeError(`bad generation ${generation}`);
  return { docs: `docs_${generation}`, fts: `fts_${generation}` };
}
