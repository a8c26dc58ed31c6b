/**
 * Registers what deviations keep in use: an entity type (deviation type) is not deleted while a
 * deviation has it, nor a user status while a deviation is in it.
 */
import { entityTypeUsageCheckers } from "../properties/entity-types/usage";
import { userStatusUsageCheckers } from "../properties/user-statuses/store";

async function count(db: D1Database, sql: string, id: string): Promise<number> {
  return (await db.prepare(sql).bind(id).first<{ n: number }>())?.n ?? 0;
}

let registered = false;

/** Idempotent, so every app instance (and test) may call it. */
export function registerDeviationUsage(): void {
  if (registered) return;
  registered = true;
  entityTypeUsageCheckers.push((db, id) => count(db, "SELECT count(*) AS n FROM deviations WHERE type_id = ?1", id));
  userStatusUsageCheckers.push((db, id) => count(db, "SELECT count(*) AS n FROM deviations WHERE status = ?1", id));
}
