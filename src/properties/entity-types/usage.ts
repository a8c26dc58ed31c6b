/**
 * An entity type can be deleted only while no entity uses it. No domain tables exist yet, so each
 * domain whose entities carry a type (deviations, work items, activities, ...) appends a checker
 * here when it lands, e.g. `entityTypeUsageCheckers.push((db, id) => countDeviationsOfType(db, id))`.
 */
export type EntityTypeUsageChecker = (db: D1Database, entityTypeId: string) => Promise<number>;

export const entityTypeUsageCheckers: EntityTypeUsageChecker[] = [];

/** How many entities use the type, over every registered domain. */
export async function countEntityTypeUses(db: D1Database, entityTypeId: string): Promise<number> {
  const counts = await Promise.all(entityTypeUsageCheckers.map((check) => check(db, entityTypeId)));
  return counts.reduce((sum, n) => sum + n, 0);
}
