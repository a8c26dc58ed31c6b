/**
 * The rules of a file reference (spec 2.5), reusable by every owner of file references: Platform
 * names an existing, fully stored file (`files`, state ready) and no url; External names an http or
 * https url and no platform file. Every problem is reported at once.
 */
import { ApiError, type FieldProblem } from "../../pkg/errors";
import type { FileReferenceInput } from "./schema";

export interface CheckedFileReference {
  location: FileReferenceInput["location"];
  platformFileId: string | null;
  url: string | null;
  name: string | null;
}

export async function checkFileReference(db: D1Database, input: FileReferenceInput, at = "body"): Promise<CheckedFileReference> {
  const problems: FieldProblem[] = [];
  if (input.location === "Platform") {
    if (input.url !== null) problems.push({ field: `${at}.url`, rule: "notAllowed", message: "A Platform file reference has no url." });
    if (input.platformFile === null) {
      problems.push({ field: `${at}.platformFile`, rule: "required", message: "A Platform file reference needs platformFile.id." });
    } else {
      const file = await db.prepare("SELECT 1 AS found FROM files WHERE id = ?1 AND state = 'ready'").bind(input.platformFile.id).first();
      if (!file) problems.push({ field: `${at}.platformFile.id`, rule: "exists", message: `The file ${input.platformFile.id} does not exist (POST /Files).` });
    }
  } else {
    if (input.platformFile !== null) problems.push({ field: `${at}.platformFile`, rule: "notAllowed", message: "An External file reference has no platformFile." });
    if (input.url === null || input.url === "") {
      problems.push({ field: `${at}.url`, rule: "required", message: "An External file reference needs a url." });
    } else if (!isHttpUrl(input.url)) {
      problems.push({ field: `${at}.url`, rule: "format", message: "The url must be an absolute http or https address." });
    }
  }
  if (problems.length > 0) throw new ApiError("ValidationFailed", problems.map((p) => `${p.field}: ${p.message}`).join("; "), { errors: problems });
  return {
    location: input.location,
    platformFileId: input.location === "Platform" ? input.platformFile!.id : null,
    url: input.location === "External" ? input.url : null,
    name: input.name === "" ? null : input.name,
  };
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
  } catch {
    return false;
  }
}
