/**
 * The rules of a file reference (spec 2.5), for every owner of file references: Platform names a
 * file of POST /Files that the caller may see (stored, and visible by the files access rule) and no
 * url; External names an absolute http or https url and no platform file. Every problem is reported
 * at once.
 */
import type { Database } from "../db/statements";
import { ApiError, type FieldProblem } from "../pkg/errors";
import { maySee, type Viewer } from "../upload/files/access";
import type { FileReferenceInput } from "./schema";

export interface CheckedFileReference {
  location: FileReferenceInput["location"];
  platformFileId: string | null;
  url: string | null;
  name: string | null;
}

interface FileFacts {
  state: string;
  owner_id: string;
  created_by: string | null;
  object_type: string | null;
  object_id: string | null;
}

async function visibleFile(db: Database, viewer: Viewer, id: string): Promise<boolean> {
  const file = await db
    .prepare("SELECT state, owner_id, created_by, object_type, object_id FROM files WHERE id = ?1")
    .bind(id)
    .first<FileFacts>();
  return (
    file !== null &&
    maySee(viewer, {
      state: file.state,
      ownerId: file.owner_id,
      createdBy: file.created_by,
      objectType: file.object_type,
      objectId: file.object_id,
    })
  );
}

export async function checkFileReference(
  db: Database,
  viewer: Viewer,
  input: FileReferenceInput,
  at = "body",
): Promise<CheckedFileReference> {
  const problems: FieldProblem[] = [];
  if (input.location === "Platform") {
    if (input.url !== null) problems.push({ field: `${at}.url`, rule: "notAllowed", message: "A Platform file reference has no url." });
    if (input.platformFile === null) {
      problems.push({ field: `${at}.platformFile`, rule: "required", message: "A Platform file reference needs platformFile.id." });
    } else if (!(await visibleFile(db, viewer, input.platformFile.id))) {
      // A file the caller may not see is reported as missing, as GET /Files/{id} answers 404 for it.
      problems.push({
        field: `${at}.platformFile.id`,
        rule: "exists",
        message: `The file ${input.platformFile.id} does not exist (GET /Files/{id}).`,
      });
    }
  } else {
    if (input.platformFile !== null)
      problems.push({ field: `${at}.platformFile`, rule: "notAllowed", message: "An External file reference has no platformFile." });
    if (input.url === null || input.url === "") {
      problems.push({ field: `${at}.url`, rule: "required", message: "An External file reference needs a url." });
    } else if (!isHttpUrl(input.url)) {
      problems.push({ field: `${at}.url`, rule: "format", message: "The url must be an absolute http or https address." });
    }
  }
  if (problems.length > 0)
    throw new ApiError("ValidationFailed", problems.map((p) => `${p.field}: ${p.message}`).join("; "), { errors: problems });
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
