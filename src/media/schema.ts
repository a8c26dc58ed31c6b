import { z } from "@hono/zod-openapi";
import { IMAGE_FORMATS } from "./image/formats";

export const MEDIA_SIZES = ["Original", "Medium", "Small"] as const;
export type MediaSize = (typeof MEDIA_SIZES)[number];

export const MEDIA_TYPES = ["image", "document"] as const;
export type MediaType = (typeof MEDIA_TYPES)[number];

const CHECK = z.enum(["passed", "failed"]);

export const RecognitionSchema = z
  .object({
    extension: CHECK.openapi({
      description: "Check 1: the file name ends in .jpg, .jpeg, .png, .gif, .bmp, .tiff (.tif), .ico, .webp, .heic, .svg or .avif.",
    }),
    mimeType: CHECK.openapi({
      description: "Check 2: the part's declared Content-Type is an image type of spec 2.6 (or a common alias such as image/jpg).",
    }),
    magicBytes: CHECK.openapi({
      description: "Check 3: the first bytes are an image format's signature; they decide the format, whatever the name says.",
    }),
    integrity: z.enum(["passed", "failed", "notChecked"]).openapi({
      description:
        "Check 4: the image decoded completely. notChecked (detail says why): a format kept as uploaded (ICO, SVG), an " +
        "image past the pixel limits (120 MP; a HEIC or AVIF that is one coded picture rather than a grid of tiles: 8 " +
        "MP and 2 MP), an encoding not read (arithmetic-coded or 12-bit JPEG, a BMP holding a JPEG or PNG, some TIFF " +
        "compressions), or not an image.",
    }),
    detectedFormat: z.enum(IMAGE_FORMATS).nullable().openapi({ description: "The format the magic bytes identify." }),
    failedChecks: z
      .array(z.enum(["extension", "mimeType", "magicBytes", "integrity"]))
      .openapi({ description: "The checks that failed, in the order above." }),
    detail: z.string().nullable().openapi({ description: "Why integrity failed or was not checked." }),
    location: z
      .enum(["none", "kept", "removed"])
      .optional()
      .openapi({
        description:
          "The GPS position in the original's metadata (EXIF, XMP): none found, kept (the original carries it; Medium and " +
          "Small never do), or removed on upload (StripLocation=true). Absent for media stored before this was recorded.",
      }),
  })
  .openapi("MediaRecognition");
export type Recognition = z.infer<typeof RecognitionSchema>;

export const MediaSizeSchema = z
  .object({
    name: z.enum(MEDIA_SIZES),
    width: z.number().int().nullable(),
    height: z.number().int().nullable(),
    contentType: z.string(),
    size: z.number().int().openapi({ description: "Bytes." }),
    isOriginal: z
      .boolean()
      .openapi({ description: "True when this size is served with the original's bytes (the image is already within it)." }),
  })
  .openapi("MediaSize");
export type MediaSizeEntry = z.infer<typeof MediaSizeSchema>;

export const MediaSchema = z
  .object({
    id: z.uuid(),
    name: z.string().openapi({ description: "The uploaded file's name (without any path)." }),
    type: z.enum(MEDIA_TYPES).openapi({ description: "The type the client declared." }),
    contentType: z.string().openapi({
      description:
        "What GET /Medias/{id}/Data serves: the detected format's type for images, else the declared type " +
        "(application/octet-stream when none or an image type).",
    }),
    size: z.number().int().openapi({ description: "Bytes of the original." }),
    checksum: z.string().openapi({ description: "SHA-256 of the original, hex." }),
    isImage: z.boolean().openapi({
      description:
        "Extension, MIME type and magic bytes all say image. A corrupt image stays an image (integrity: failed) and " +
        "keeps only its original.",
    }),
    width: z.number().int().nullable().openapi({ description: "As shown (EXIF orientation applied); null for SVG and non-images." }),
    height: z.number().int().nullable(),
    sizes: z.array(MediaSizeSchema).openapi({ description: "The sizes GET /Medias/{id}/Data serves without falling back." }),
    recognition: RecognitionSchema,
    owner: z.object({ id: z.string(), name: z.string().nullable() }),
    createdAt: z.iso.datetime(),
  })
  .openapi("Media");
export type Media = z.infer<typeof MediaSchema>;

/**
 * The documented multipart body. A plain JSON Schema, not zod: a zod schema would make the route
 * buffer and parse the whole form before the handler, which reads it as a stream instead.
 */
export const UPLOAD_MEDIA_FORM = {
  type: "object" as const,
  required: ["File", "Type"],
  description:
    "Field names are matched without regard to case (File, file, FILE, ...); fields other than File, Type and StripLocation are ignored.",
  properties: {
    File: { type: "string", format: "binary", description: "The file; its name is the part's filename, its type the part's Content-Type." },
    Type: { type: "string", description: "image or document (any case).", example: "image" },
    StripLocation: {
      type: "string",
      description:
        "true: remove the GPS position (EXIF GPS directory, XMP) from the stored original of a JPEG, PNG, TIFF, WebP, " +
        "HEIC or AVIF (other formats carry none this service reads). Default false: the original is kept as uploaded. " +
        "Medium and Small never carry EXIF.",
      example: "true",
    },
  } as Record<string, { type: "string"; format?: string; description?: string; example?: string }>,
};

export const MediaDataQuery = z.object({
  size: z
    .string()
    .optional()
    .openapi({
      param: { name: "size", in: "query" },
      description: "Original, Medium or Small (any case); images only.",
      example: "Medium",
    }),
});

export const RangeHeaders = z.object({
  range: z.string().optional().openapi({ description: "One byte range, e.g. bytes=0-1023, bytes=1024- or bytes=-500." }),
  "if-range": z.string().optional().openapi({ description: "Serve the range only while this ETag is current." }),
  "if-none-match": z.string().optional(),
});

export const InstructionImageSchema = z
  .object({
    image: z.string().openapi({ description: "The image, base64 (standard alphabet; a data: URL prefix is accepted on PUT)." }),
    contentType: z.string().openapi({ example: "image/png" }),
  })
  .openapi("InstructionImage");

export const PutInstructionImageSchema = z
  .object({
    image: z.string().min(1),
    contentType: z
      .string()
      .optional()
      .openapi({ description: "Optional; when given it must be an image type of spec 2.6. The magic bytes decide the stored type." }),
  })
  .strict()
  .openapi("PutInstructionImage");
