/** GET /Tags: every distinct tag of work items and work templates (latest revisions), from entity_tags. */
import type { Database } from "../db/statements";
import { z } from "@hono/zod-openapi";
import { newApp } from "../app-factory";
import { defineRoute, json } from "../pkg/openapi";
import { PERMISSIONS } from "../pkg/permissions";

const TagsQuery = z.object({
  searchText: z.string().optional().openapi({ description: "Only tags containing this text (case-insensitive, ASCII).", example: "pump" }),
});

export async function listTags(db: Database, searchText: string | undefined): Promise<string[]> {
  const text = searchText?.trim() ?? "";
  const { results } = await db
    .prepare(
      `SELECT DISTINCT tag FROM entity_tags WHERE entity_kind IN ('workItem', 'workTemplate')
         AND (?1 = '' OR instr(lower(tag), lower(?1)) > 0) ORDER BY tag`,
    )
    .bind(text)
    .all<{ tag: string }>();
  return results.map((r) => r.tag);
}

export function tagsApp() {
  const app = newApp();
  app.openapi(
    defineRoute(
      { permission: PERMISSIONS.workRead, area: "workManagement" },
      {
        method: "get",
        path: "/Tags",
        tags: ["Tags"],
        summary: "Every distinct tag of work items and work templates, sorted",
        description:
          "Tags of work templates count at their latest revision. Sorted by binary collation (exact spelling; tags " +
          "differing in case are distinct).",
        request: { query: TagsQuery },
        responses: { 200: json(z.array(z.string()), "The tags.") },
      },
    ),
    async (c) => c.json(await listTags(c.env.DB, c.req.valid("query").searchText), 200),
  );
  return app;
}
