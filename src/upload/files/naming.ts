/** File names, extensions and content types of uploads, shared by POST /Files and multipart uploads. */
import { invalid } from "../../pkg/errors";
import type { DataType } from "../data-types/schema";

const MAX_NAME = 255;

/**
 * The stored name: the last path segment of what the client sent (browsers on old systems send
 * `C:\dir\name.xlsx`), without control characters, NFC-normalised. Throws a 400 naming `field`.
 */
export function cleanFileName(raw: string, field: string): string {
  const base = raw.split(/[\\/]/).pop() ?? "";
  const cleaned = base
    .replace(/[\u0000-\u001f\u007f]/g, "")
    .trim()
    .normalize("NFC");
  if (cleaned === "" || cleaned === "." || cleaned === "..")
    throw invalid(field, "required", "The file needs a name (with its extension).");
  if (cleaned.length > MAX_NAME) throw invalid(field, "maxLength", `A file name is at most ${MAX_NAME} characters.`);
  return cleaned;
}

/** Throws a 400 listing the allowed extensions unless the name ends with one of them. */
export function checkExtension(name: string, dataType: DataType, field: string): void {
  const lower = name.toLowerCase();
  const ok = dataType.allowedExtensions.some((ext) => lower.length > ext.length + 1 && lower.endsWith(`.${ext}`));
  if (!ok) {
    const allowed = dataType.allowedExtensions.map((ext) => `.${ext}`).join(", ");
    throw invalid(field, "extension", `'${name}' does not have an extension the data type '${dataType.name}' allows: ${allowed}.`);
  }
}

const MEDIA_TYPE = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+(?:\s*;\s*[a-z0-9!#$&^_.+-]+=(?:[a-z0-9!#$&^_.+-]+|"[^"\\\r\n]*"))*$/i;

/** The client's content type when it is a well-formed media type, else application/octet-stream. */
export function normaliseContentType(raw: string | null | undefined): string {
  const value = raw?.trim() ?? "";
  if (value === "" || value.length > 200 || !MEDIA_TYPE.test(value)) return "application/octet-stream";
  const semicolon = value.indexOf(";");
  return semicolon < 0 ? value.toLowerCase() : value.slice(0, semicolon).toLowerCase() + value.slice(semicolon);
}
