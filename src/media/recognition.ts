/**
 * The four checks of spec 2.6 and what they decide. A file is an image when its extension, its
 * declared MIME type and its magic bytes all say image; the magic bytes then decide which format it
 * is (a PNG named .jpg is a PNG: served as image/png and decoded as PNG). Decoding is the fourth
 * check: a corrupt image stays an image, keeps only its original, and says integrity: failed.
 * A renamed file is caught both ways: a non-image named .jpg fails magicBytes; an image named .txt
 * fails extension (and usually mimeType), is stored as a document, and its detectedFormat tells.
 */
import { formatOfExtension, formatOfMimeType, sniffFormat, type ImageFormat } from "./image/formats";
import type { IntegrityOutcome } from "./image/pipeline";
import type { Recognition } from "./schema";

export interface FirstChecks {
  extension: boolean;
  mimeType: boolean;
  detectedFormat: ImageFormat | null;
}

export function firstChecks(fileName: string, declaredMimeType: string | undefined, bytes: Uint8Array): FirstChecks {
  return {
    extension: formatOfExtension(fileName) !== undefined,
    mimeType: formatOfMimeType(declaredMimeType) !== undefined,
    detectedFormat: sniffFormat(bytes) ?? null,
  };
}

/** The image format when the first three checks pass, else undefined (not an image). */
export function imageFormatOf(checks: FirstChecks): ImageFormat | undefined {
  return checks.extension && checks.mimeType && checks.detectedFormat ? checks.detectedFormat : undefined;
}

export function recognition(checks: FirstChecks, integrity: IntegrityOutcome, detail: string | null): Recognition {
  const failedChecks: Recognition["failedChecks"] = [];
  if (!checks.extension) failedChecks.push("extension");
  if (!checks.mimeType) failedChecks.push("mimeType");
  if (!checks.detectedFormat) failedChecks.push("magicBytes");
  if (integrity === "failed") failedChecks.push("integrity");
  return {
    extension: checks.extension ? "passed" : "failed",
    mimeType: checks.mimeType ? "passed" : "failed",
    magicBytes: checks.detectedFormat ? "passed" : "failed",
    integrity,
    detectedFormat: checks.detectedFormat,
    failedChecks,
    detail,
  };
}
