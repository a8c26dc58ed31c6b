/** Reads of the directory of users. The rows are written by recorder.ts only. */
import type { Database } from "../db/statements";
import type { z } from "@hono/zod-openapi";
import type { Principal } from "../pkg/auth";
import { notFound } from "../pkg/errors";
import { compileListQuery, defineList, enumCondition, noProperties, runListQuery } from "../pkg/query";
import { searchCondition } from "../pkg/query/params";
import { kindOf } from "./recorder";
import type { User, UserListQuery } from "./schema";

interface UserRow {
  id: string;
  name: string;
  kind: string;
  client_id: string | null;
  first_seen_at: string;
  last_seen_at: string;
}

const COLUMNS = "u.id, u.name, u.kind, u.client_id, u.first_seen_at, u.last_seen_at";

const userList = defineList({
  table: "users",
  alias: "u",
  entityKind: "user",
  idColumn: "id",
  idFormat: "text",
  fields: {
    name: { column: "lower(u.name)", displayColumn: "u.name" },
    id: { column: "u.id" },
    kind: { column: "u.kind" },
    firstSeenAt: { column: "u.first_seen_at", type: "datetime" },
    lastSeenAt: { column: "u.last_seen_at", type: "datetime" },
  },
  searchColumns: ["u.name", "u.id", "u.client_id"],
  defaultOrder: "name asc",
  select: COLUMNS,
});

function toUser(row: UserRow): User {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind === "client" ? "client" : "person",
    clientId: row.client_id,
    firstSeenAt: row.first_seen_at,
    lastSeenAt: row.last_seen_at,
  };
}

/** A strong validator of a user's answer (the rows carry no etag column: they change only by sightings). */
export async function userEtag(user: User): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(JSON.stringify(user))));
  return [...digest.slice(0, 10)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export async function listUsers(db: Database, query: z.infer<typeof UserListQuery>): Promise<{ items: User[]; total: number | undefined }> {
  const keyword = searchCondition(userList, query.keyword);
  const compiled = await compileListQuery(userList, query, noProperties, [
    ...(keyword ? [keyword] : []),
    ...enumCondition(query.kinds, ["person", "client"], "query.kinds", "u.kind", "a user kind"),
  ]);
  const { items, total } = await runListQuery<UserRow>(db, compiled);
  return { items: items.map(toUser), total };
}

export async function findUser(db: Database, id: string): Promise<User | null> {
  const row = await db.prepare(`SELECT ${COLUMNS} FROM users u WHERE u.id = ?1`).bind(id).first<UserRow>();
  return row ? toUser(row) : null;
}

export async function getUser(db: Database, id: string): Promise<User> {
  const user = await findUser(db, id);
  if (!user) throw notFound("User", id);
  return user;
}

/** The caller as the directory shows it: its row, or (not recorded yet) what its token says, seen now. */
export async function currentUser(db: Database, principal: Principal, now: Date): Promise<User> {
  const recorded = await findUser(db, principal.id);
  if (recorded) return recorded;
  const at = now.toISOString();
  return {
    id: principal.id,
    name: principal.name,
    kind: kindOf(principal),
    clientId: principal.clientId ?? null,
    firstSeenAt: at,
    lastSeenAt: at,
  };
}
