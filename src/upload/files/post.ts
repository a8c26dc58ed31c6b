/**
 * POST /Files: reads the multipart form as it streams in, checks the data type and the extension
 * BEFORE the first byte goes to R2, writes the object (hashing it on the way), and only then
 * inserts the ready row with its event. A failure after the object was written deletes it (best
 * effort; the orphan sweep removes what this misses).
 */
import type { Database } from "../../db/statements";
import { invalid } from "../../pkg/errors";
import type { WriteContext } from "../../pkg/db";
import type { DataType } from "../data-types/schema";
import { findDataType } from "../data-types/store";
import { newObjectKey, ObjectWriter, type StoredObject } from "../storage";
import type { Viewer } from "./access";
import { fieldText, readForm, type FormPart } from "../../pkg/multipart";
import { checkExtension, cleanFileName, normaliseContentType } from "./naming";
import { insertReadyFile, type StoredFile } from "./store";

/** Form fields by lower-case name, and the name problems report them under. */
const FIELDS = {
  id: "id",
  datatypeid: "dataTypeId",
  file: "file",
  objectownerid: "objectOwnerId",
  objectownername: "objectOwnerName",
} as const;
type FieldName = (typeof FIELDS)[keyof typeof FIELDS];
type TextField = Exclude<FieldName, "file" | "id">;

/** A data type referred to by a request body, or a 400 naming the field. */
export async function dataTypeFor(db: Database, id: string, field: string): Promise<DataType> {
  const found = await findDataType(db, id);
  if (!found) throw invalid(field, "exists", `Data type '${id}' does not exist.`);
  return found.value;
}

/**
 * The object owner of a new file (spec 4.2 rule 8): the caller unless another id is given. A name
 * without an id is refused, as it could only be meant for someone else.
 */
export function ownerFor(viewer: Viewer, id: string | undefined, name: string | undefined, fields: { id: string; name: string }) {
  if (id === undefined || id === viewer.id) {
    if (id === undefined && name !== undefined) throw invalid(fields.name, "requires", `${fields.name} needs ${fields.id}.`);
    return { id: viewer.id, name: name ?? viewer.name };
  }
  return { id, name: name ?? null };
}

function checkText(field: TextField, value: string): string {
  const trimmed = value.trim();
  if (trimmed === "") throw invalid(`body.${field}`, "required", `${field} is empty.`);
  if (trimmed.length > 200) throw invalid(`body.${field}`, "maxLength", `${field} is at most 200 characters.`);
  return trimmed;
}

interface FilePart {
  name: string;
  contentType: string;
  /** Set when the data type was known as the file arrived: the bytes went straight to R2. */
  stored?: StoredObject;
  /** Otherwise the bytes, held until the form ends and the data type is known. */
  held?: Uint8Array[];
}

export async function postFile(
  ctx: WriteContext,
  bucket: R2Bucket,
  viewer: Viewer,
  body: ReadableStream<Uint8Array>,
  boundary: string,
): Promise<StoredFile> {
  const fileId = ctx.uuid();
  const key = newObjectKey(fileId);
  const text: Partial<Record<TextField, string>> = {};
  let dataType: DataType | undefined;
  let file: FilePart | undefined;
  let writer: ObjectWriter | undefined;

  const store = async (source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, part: FilePart): Promise<StoredObject> => {
    writer = new ObjectWriter(bucket, key, part.contentType);
    for await (const chunk of source) await writer.write(chunk);
    return writer.close();
  };

  try {
    for await (const part of readForm(body, boundary)) {
      const field = FIELDS[part.head.name.toLowerCase() as keyof typeof FIELDS] as FieldName | undefined;
      if (field === undefined) {
        throw invalid(
          `body.${part.head.name}`,
          "unknown",
          `Unknown form field '${part.head.name}'; the form takes dataTypeId, file, objectOwnerId, objectOwnerName and an empty id.`,
        );
      }
      if (field === "id") {
        // The original client sends `Id` empty: the service assigns the id.
        if ((await fieldText(part, "body.id", 200)).trim() !== "")
          throw invalid("body.id", "readOnly", "id is assigned by the service; send it empty or leave it out.");
        continue;
      }
      if (field === "file") {
        if (file) throw invalid("body.file", "single", "The form carries more than one file; send one per request.");
        file = await readFilePart(part);
        if (text.dataTypeId !== undefined) {
          dataType = await dataTypeFor(ctx.db, text.dataTypeId, "body.dataTypeId");
          checkExtension(file.name, dataType, "body.file");
          file.stored = await store(part.chunks, file);
        } else {
          file.held = [];
          for await (const chunk of part.chunks) file.held.push(chunk);
        }
        continue;
      }
      if (text[field] !== undefined) throw invalid(`body.${field}`, "single", `${field} is given more than once.`);
      text[field] = checkText(field, await fieldText(part, `body.${field}`, 1024));
    }

    if (text.dataTypeId === undefined) throw invalid("body.dataTypeId", "required", "dataTypeId is required.");
    if (!file) throw invalid("body.file", "required", "file is required (a file part with a filename).");
    const owner = ownerFor(viewer, text.objectOwnerId, text.objectOwnerName, { id: "body.objectOwnerId", name: "body.objectOwnerName" });
    if (!file.stored) {
      dataType = await dataTypeFor(ctx.db, text.dataTypeId, "body.dataTypeId");
      checkExtension(file.name, dataType, "body.file");
      const held = file.held ?? [];
      file.held = undefined;
      file.stored = await store(held, file);
    }
    const newFile = {
      id: fileId,
      name: file.name,
      dataType: { id: dataType!.id, name: dataType!.name },
      size: file.stored.size,
      contentType: file.contentType,
      checksum: file.stored.checksum,
      r2Key: key,
      owner,
    };
    try {
      return await insertReadyFile(ctx, newFile);
    } catch (error) {
      // The insert may have committed although its answer was lost: the object then belongs to a
      // visible row and must stay. Delete it only when the row is known to be absent; when even that
      // cannot be told, the orphan sweep decides later.
      writer = (await rowIsAbsent(ctx.db, fileId)) ? writer : undefined;
      throw error;
    }
  } catch (error) {
    // Whatever was written (a finished object or a multipart upload in progress) goes.
    if (writer) await (writer as ObjectWriter).abort();
    throw error;
  }
}

async function rowIsAbsent(db: Database, id: string): Promise<boolean> {
  try {
    return (await db.prepare("SELECT 1 AS found FROM files WHERE id = ?1").bind(id).first()) === null;
  } catch {
    return false;
  }
}

async function readFilePart(part: FormPart): Promise<FilePart> {
  if (part.head.filename === null) throw invalid("body.file", "file", "file must be a file part (with a filename), not a text field.");
  return { name: cleanFileName(part.head.filename, "body.file"), contentType: normaliseContentType(part.head.contentType) };
}
