/** What the work template route files share: permissions, tags, the revision query and the answer of a write. */
import { z } from "@hono/zod-openapi";
import { jsonWithEtag } from "../../pkg/etag";
import { IdParam, json } from "../../pkg/openapi";
import { PERMISSIONS } from "../../pkg/permissions";
import { type Written } from "../writer";
import { WorkTemplateSchema, type WorkTemplate } from "./schema";

export const tags = ["Work templates"];
export const read = { permission: PERMISSIONS.workRead, area: "workManagement" } as const;
export const write = { permission: PERMISSIONS.workWrite, area: "workManagement" } as const;
export const REVISION_NOTE =
  "Revision rule (spec section 3): while no work item is based on the latest revision it is changed in place; " +
  "once one is, this operation copies it with all its dependents as revision + 1 and changes the copy. The answer " +
  "is the latest revision after the change.";

export const SectionParams = IdParam.extend({ sectionTemplateId: z.uuid().openapi({ param: { name: "sectionTemplateId", in: "path" } }) });
export const RevisionQuery = z.object({
  revision: z.coerce
    .number()
    .int()
    .min(1)
    .optional()
    .openapi({ description: "Read this revision instead of the latest (e.g. the one a work item is based on)." }),
});
export const templateResponse = (description: string) => json(WorkTemplateSchema, description);

export function answer<S extends 200 | 201 = 200>(
  c: Parameters<typeof jsonWithEtag>[0],
  written: Written<WorkTemplate>,
  status: S = 200 as S,
) {
  return jsonWithEtag(c, written.value, written.etag ?? "", status);
}
