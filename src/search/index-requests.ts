/** What the index routes read from a request: names, schedules, the multipart form, the resynchronisation target. */
import type { Context } from "hono";
import type { AppEnv } from "../env";
import type { Principal } from "../pkg/auth";
import { ApiError, invalid } from "../pkg/errors";
import { jsonWithEtag } from "../pkg/etag";
import { bodyStream, fieldText, formBoundary, readForm } from "../pkg/multipart";
import { PERMISSIONS } from "../pkg/permissions";
import { scheduleRuleProblem } from "../pkg/schedule";
import { MAX_LIBRARY_BYTES } from "./library";
import { mayChangeIndex, toIndex, visibleIndex, type IndexRow } from "./store";

export const INDEX_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function checkName(name: string, field: string) {
  if (!INDEX_NAME.test(name) || UUID.test(name))
    throw invalid(
      field,
      "format",
      "An index name is 1 to 100 letters, digits, '.', '_' or '-' (starting with a letter or digit), and not shaped like an id.",
    );
  if (name.toLowerCase().startsWith("platform-"))
    throw invalid(field, "reserved", "Names starting with 'platform-' are reserved for the standard indices.");
}

export function checkSchedule(cron: string | null | undefined, field: string): string | null {
  if (cron === undefined || cron === null || cron.trim() === "") return null;
  const problem = scheduleRuleProblem({ cron: cron.trim() });
  if (problem) throw invalid(field, "cron", problem.message);
  return cron.trim();
}

/** The read permissions a library's clients act with: those the uploader holds. */
export const READ_PERMISSIONS = [PERMISSIONS.workRead, PERMISSIONS.assetsRead, PERMISSIONS.filesRead, PERMISSIONS.monitorsRead];
export const grantOf = (principal: Principal) => READ_PERMISSIONS.filter((p) => principal.permissions.has(p));

export function assertMayChange(principal: Principal, row: IndexRow) {
  if (!mayChangeIndex(principal, row))
    throw new ApiError("Forbidden", `Changing index '${row.name}' needs its ownership with 'index_write', or 'index_admin'.`);
}

export interface IndexForm {
  name?: string;
  displayName?: string;
  objectOwnerId?: string;
  triggerSchedule?: string;
  file?: { name: string; source: string };
}

/** Reads the multipart form of index creation and file replacement (field names match without case). */
export async function readIndexForm(c: Context<AppEnv>, allowed: readonly (keyof IndexForm)[]): Promise<IndexForm> {
  const boundary = formBoundary(c.req.header("content-type"));
  if (!boundary) throw new ApiError("UnsupportedMediaType", "This route takes a multipart/form-data body (with a boundary).");
  const form: IndexForm = {};
  const byLower = new Map(allowed.map((k) => [k.toLowerCase(), k]));
  for await (const part of readForm(await bodyStream(c), boundary)) {
    const key = byLower.get(part.head.name.toLowerCase());
    if (!key)
      throw invalid(
        `body.${part.head.name}`,
        "unknownField",
        `'${part.head.name}' is not a field of this form; its fields are ` +
          `${allowed.map((k) => k[0]!.toUpperCase() + k.slice(1)).join(", ")}.`,
      );
    if (form[key] !== undefined) throw invalid(`body.${key}`, "single", `${key} is given twice.`);
    if (key === "file") {
      if (!part.head.filename) throw invalid("body.file", "file", "File must be a file part (with a filename).");
      const source = await fieldText(part, "body.file", MAX_LIBRARY_BYTES);
      if (/[\ud800-\udfff]/.test(source.replace(/[\ud800-\udbff][\udc00-\udfff]/g, "")) || source.includes("\ufffd"))
        throw invalid("body.file", "utf8", "The library file must be UTF-8 JavaScript.");
      form.file = { name: part.head.filename, source };
    } else {
      form[key] = (await fieldText(part, `body.${key}`, 1024)).trim();
    }
  }
  return form;
}

export async function respondIndex<S extends 200 | 201 = 200>(c: Context<AppEnv>, row: IndexRow, status: S = 200 as S) {
  return jsonWithEtag(c, toIndex(row), row.etag, status);
}

/** Resolves the index named by a resynchronisation path: an id in 1.1, a name in 1.0. */
export async function resyncTarget(c: Context<AppEnv>, value: string): Promise<IndexRow> {
  const version = c.get("apiVersion");
  const principal = c.get("principal");
  if (version === "1.1" && !UUID.test(value)) {
    throw new ApiError(
      "UnsupportedApiVersion",
      `PUT /Indices/{indexName}/Resynchronization is the version 1.0 route; in 1.1 the path names the index id (send ` +
        `api-version: 1.0 to use the name '${value}').`,
      { headers: { "api-supported-versions": "1.0" } },
    );
  }
  if (version === "1.0" && UUID.test(value)) {
    throw new ApiError(
      "UnsupportedApiVersion",
      "PUT /Indices/{id}/Resynchronization is the version 1.1 route; in 1.0 the path names the index name (send " +
        "api-version: 1.1 to use the id).",
      { headers: { "api-supported-versions": "1.1" } },
    );
  }
  return visibleIndex(c.env.DB, principal, version === "1.1" ? { id: value } : { name: value }, version);
}
