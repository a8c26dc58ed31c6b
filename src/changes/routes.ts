/**
 * GET /Changes: what changed since a cursor, for clients that were offline ("what changed since my
 * last sync") instead of re-downloading lists. Built on the outbox, which records every change in the
 * same batch as the change itself: each entry is one change, in the order they were made, with the
 * entity as its write left it (`data`), or a tombstone (`action: "deleted"`, `data: null`).
 *
 * The cursor is the outbox sequence number (opaque to clients, valid across deployments). The outbox
 * keeps dispatched changes 7 days: a cursor older than what is kept answers 410 (`CursorExpired`),
 * and the client resynchronises from the lists. Only kinds whose visibility is their read permission
 * are in the feed (files and media, which are visible per owner and metadata, are not).
 */
import { z } from "@hono/zod-openapi";
import { newApp } from "../app-factory";
import { ApiError } from "../pkg/errors";
import { defineRoute, json } from "../pkg/openapi";
import { changesAfter, newestEverAssigned, outboxBounds } from "./store";
import { PERMISSIONS } from "../pkg/permissions";
import { CHANGE_KINDS, ChangeSchema, ChangesQuery } from "./schema";

export function changesApp() {
  const app = newApp();
  app.openapi(
    defineRoute(
      { permission: PERMISSIONS.workRead, area: "platform", errors: [] },
      {
        method: "get",
        path: "/Changes",
        tags: ["Changes"],
        summary: "Changes since a cursor (offline sync), oldest first, with tombstones for deletions",
        description:
          "Pages with `since` = the answer's `next` until `hasMore` is false. The feed holds 7 days; an older cursor " +
          "answers 410 CursorExpired (resynchronise from the lists); a cursor beyond the newest change answers 400 naming " +
          "the newest. Kinds are filtered by the caller's permissions; files and media are not in the feed.",
        request: { query: ChangesQuery },
        responses: {
          200: json(z.object({ changes: z.array(ChangeSchema), next: z.string(), hasMore: z.boolean() }), "One page of changes."),
        },
      },
    ),
    async (c) => {
      const { since, types, take } = c.req.valid("query");
      const principal = c.get("principal");
      const readable = Object.entries(CHANGE_KINDS)
        .filter(([, permission]) => principal.permissions.has(permission))
        .map(([kind]) => kind);
      const asked = types
        ? types
            .split(",")
            .map((t) => t.trim())
            .filter(Boolean)
        : readable;
      for (const type of asked) {
        if (!Object.hasOwn(CHANGE_KINDS, type)) {
          throw new ApiError("InvalidQuery", `types: '${type}' is not a kind of the feed (${Object.keys(CHANGE_KINDS).join(", ")}).`, {
            errors: [{ field: "query.types", rule: "enum", message: `'${type}' is not a kind of the feed.` }],
          });
        }
        if (!readable.includes(type))
          throw new ApiError("Forbidden", `Reading changes of ${type} needs the permission '${CHANGE_KINDS[type]}'.`);
      }
      const after = since === undefined ? 0 : Number(since);
      if (after > 0) {
        const bounds = await outboxBounds(c.env.DB);
        if (bounds.oldest !== null && after < bounds.oldest - 1) {
          throw new ApiError(
            "CursorExpired",
            "The cursor is older than the changes kept (7 days): resynchronise from the lists, then follow the feed from " +
              "the cursor of its first page.",
          );
        }
        // A cursor no answer gave (another deployment's, a restored database's, a typo) would get
        // empty pages forever: say so, naming the newest cursor to continue from.
        const newest = bounds.newest ?? (await newestEverAssigned(c.env.DB));
        if (after > newest) {
          const message =
            `since ${after} is beyond the newest change (cursor ${newest}): no answer of this feed gave it. Continue from ` +
            `since=${newest}, or resynchronise from the lists if the cursor came from another deployment. (A cursor from a ` +
            `moment ago on another replica: send the X-Session-Bookmark of that answer.)`;
          throw new ApiError("InvalidQuery", message, { errors: [{ field: "query.since", rule: "beyondNewest", message }] });
        }
      }
      if (asked.length === 0) return c.json({ changes: [], next: String(after), hasMore: false }, 200);
      const results = await changesAfter(c.env.DB, after, asked, take + 1);
      const page = results.slice(0, take);
      const changes = page.map((r) => ({
        cursor: String(r.seq),
        type: r.entity_kind,
        id: r.entity_id,
        action: r.action,
        occurredAt: r.occurred_at,
        data: r.action === "deleted" ? null : (JSON.parse(r.payload) as unknown),
      }));
      // With nothing new, `next` stays where the client is, so it can poll with the same cursor.
      const next = page.length > 0 ? String(page[page.length - 1]!.seq) : String(after);
      return c.json({ changes, next, hasMore: results.length > take }, 200);
    },
  );
  return app;
}
