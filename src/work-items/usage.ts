/**
 * What work items and activities tell other modules about their use of shared things: an entity
 * type (a work item's type) or a user status (a work item's or activity's status) in use cannot be
 * deleted. Registered once, when the routes module is loaded.
 */
import { entityTypeUsageCheckers } from "../properties/entity-types/usage";
import { userStatusUsageCheckers } from "../properties/user-statuses/store";

let registered = false;

export function registerWorkItemUsage(): void {
  if (registered) return;
  registered = true;
  entityTypeUsageCheckers.push(async (db, typeId) => {
    const row = await db.prepare("SELECT count(*) AS n FROM work_items WHERE type_id = ?1").bind(typeId).first<{ n: number }>();
    return row?.n ?? 0;
  });
  userStatusUsageCheckers.push(async (db, statusId) => {
    const [items, activities] = await db.batch<{ n: number }>([
      db.prepare("SELECT count(*) AS n FROM work_items WHERE status = ?1").bind(statusId),
      db.prepare("SELECT count(*) AS n FROM activities WHERE status = ?1").bind(statusId),
    ]);
    return (items?.results[0]?.n ?? 0) + (activities?.results[0]?.n ?? 0);
  });
}
