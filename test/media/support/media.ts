/// <reference types="vite/client" />
/**
 * Media test helpers: the committed samples (loaded by Vite as base64 data URLs, which works in
 * workerd where the file system does not), byte builders for files too odd to commit (bombs, HEIC
 * and TIFF headers), and upload and download calls through the Worker.
 */
import { exports } from "cloudflare:workers";
import { expect } from "vitest";
import { MediaSchema, type Media } from "../../../src/media/schema";
import { call, tokenFor, type TestUser } from "../../support/http";

function fromDataUrl(url: string): Uint8Array {
  const comma = url.indexOf(",");
  const meta = url.slice(0, comma);
  const payload = url.slice(comma + 1);
  // Vite inlines SVG URL-encoded and everything else as base64.
  if (!meta.endsWith(";base64")) return new TextEncoder().encode(decodeURIComponent(payload));
  const binary = atob(payload);
  return Uint8Array.from(binary, (ch) => ch.charCodeAt(0));
}

const samples = import.meta.glob("../../fixtures/images/*", { query: "?inline", import: "default", eager: true }) as Record<string, string>;
const pngSuite = import.meta.glob("../../fixtures/pngsuite/png/*.png", { query: "?inline", import: "default", eager: true }) as Record<
  string,
  string
>;

/** A committed sample from test/fixtures/images (see test/fixtures/generate.mjs). */
export function sample(name: string): Uint8Array {
  const url = samples[`../../fixtures/images/${name}`];
  if (!url) throw new Error(`no sample ${name}`);
  return fromDataUrl(url);
}

/** Every committed sample: name and bytes. */
export function allSamples(): { name: string; bytes: Uint8Array }[] {
  return Object.entries(samples).map(([path, url]) => ({ name: path.split("/").at(-1)!, bytes: fromDataUrl(url) }));
}

/** Every PngSuite file: name (e.g. basn0g01.png) and bytes. */
export function pngSuiteFiles(): { name: string; bytes: Uint8Array }[] {
  return Object.entries(pngSuite)
    .map(([path, url]) => ({ name: path.slice(path.lastIndexOf("/") + 1), bytes: fromDataUrl(url) }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function be32(n: number): number[] {
  return [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
}

function pngChunk(type: string, data: number[]): number[] {
  const body = [...new TextEncoder().encode(type), ...data];
  return [...be32(data.length), ...body, ...be32(crc32(Uint8Array.from(body)))];
}

/**
 * A well-formed PNG (valid CRCs, an IDAT, IEND) that DECLARES width x height pixels of 8-bit RGB:
 * its IDAT holds only a tiny zlib stream. With 64000 x 64000 it is a decompression bomb.
 */
export function pngDeclaring(width: number, height: number): Uint8Array {
  // zlib stream of an empty stored block: enough to be a syntactically plausible IDAT.
  const idat = [0x78, 0x01, 0x01, 0x00, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x01];
  return Uint8Array.from([
    0x89,
    0x50,
    0x4e,
    0x47,
    0x0d,
    0x0a,
    0x1a,
    0x0a,
    ...pngChunk("IHDR", [...be32(width), ...be32(height), 8, 2, 0, 0, 0]),
    ...pngChunk("IDAT", idat),
    ...pngChunk("IEND", []),
  ]);
}

/** A JPEG whose frame header declares width x height, followed by a scan of a few bytes. */
export function jpegDeclaring(width: number, height: number): Uint8Array {
  const segment = (marker: number, payload: number[]) => [0xff, marker, (payload.length + 2) >> 8, (payload.length + 2) & 255, ...payload];
  return Uint8Array.from([
    0xff,
    0xd8,
    ...segment(0xdb, [0, ...new Array(64).fill(1)]),
    ...segment(0xc0, [8, height >> 8, height & 255, width >> 8, width & 255, 1, 1, 0x11, 0]),
    ...segment(0xc4, [0x00, 0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]),
    ...segment(0xc4, [0x10, 1, ...new Array(15).fill(0), 0]),
    ...segment(0xda, [1, 1, 0, 0, 63, 0]),
    0x00,
    0x00,
    0x00,
    0x00,
    0xff,
    0xd9,
  ]);
}

/** A GIF header declaring width x height (a bomb when large), then a trailer. */
export function gifDeclaring(width: number, height: number): Uint8Array {
  return Uint8Array.from([...new TextEncoder().encode("GIF89a"), width & 255, width >> 8, height & 255, height >> 8, 0, 0, 0, 0x3b]);
}

/** The start of a HEIC file: ftyp (heic) and meta/iprp/ipco/ispe with the size. */
export function heicHeader(
  width: number,
  height: number,
  brand = "heic",
  transforms: ({ irot: number } | { imir: number })[] = [],
): Uint8Array {
  const box = (type: string, payload: number[]) => [...be32(8 + payload.length), ...new TextEncoder().encode(type), ...payload];
  const text = (t: string) => [...new TextEncoder().encode(t)];
  const ftyp = box("ftyp", [...text(brand), 0, 0, 0, 0, ...text("mif1"), ...text(brand)]);
  const ispe = box("ispe", [0, 0, 0, 0, ...be32(width), ...be32(height)]);
  if (transforms.length === 0)
    return Uint8Array.from([
      ...ftyp,
      ...box("meta", [0, 0, 0, 0, ...box("iprp", box("ipco", ispe))]),
      ...box("mdat", new Array(32).fill(7)),
    ]);
  // Item 1, the primary picture, with ispe then the transformations in the order given.
  const properties = [ispe, ...transforms.map((t) => ("irot" in t ? box("irot", [t.irot]) : box("imir", [t.imir])))];
  const ipma = box("ipma", [0, 0, 0, 0, ...be32(1), 0, 1, properties.length, ...properties.map((_, i) => i + 1)]);
  const meta = box("meta", [
    0,
    0,
    0,
    0,
    ...box("pitm", [0, 0, 0, 0, 0, 1]),
    ...box("iinf", [0, 0, 0, 0, 0, 1, ...box("infe", [2, 0, 0, 0, 0, 1, 0, 0, ...text(brand === "avif" ? "av01" : "hvc1"), 0])]),
    ...box("iprp", [...box("ipco", properties.flat()), ...ipma]),
  ]);
  return Uint8Array.from([...ftyp, ...meta, ...box("mdat", new Array(32).fill(7))]);
}

/** A minimal little-endian TIFF: one 4x2 8-bit grey strip. */
export function tiffBytes(width = 4, height = 2): Uint8Array {
  const entries: [number, number, number][] = [
    [256, 3, width],
    [257, 3, height],
    [258, 3, 8],
    [259, 3, 1],
    [262, 3, 1],
    [273, 4, 8 + 2 + 7 * 12 + 4],
    [279, 4, width * height],
  ];
  const le16 = (n: number) => [n & 255, n >> 8];
  const le32 = (n: number) => [n & 255, (n >> 8) & 255, (n >> 16) & 255, (n >>> 24) & 255];
  const ifd = [
    ...le16(entries.length),
    ...entries.flatMap(([tag, type, value]) => [
      ...le16(tag),
      ...le16(type),
      ...le32(1),
      ...(type === 3 ? [...le16(value), 0, 0] : le32(value)),
    ]),
    0,
    0,
    0,
    0,
  ];
  return Uint8Array.from([0x49, 0x49, 0x2a, 0x00, ...le32(8), ...ifd, ...new Array(width * height).fill(128)]);
}

export interface UploadOptions {
  name?: string;
  /** The part's Content-Type; omitted when null. */
  mimeType?: string | null;
  type?: string | null;
  /** Field names as sent (default File and Type). */
  fileField?: string;
  typeField?: string;
  user?: Partial<TestUser>;
  anonymous?: boolean;
  headers?: Record<string, string>;
}

export function uploadForm(bytes: Uint8Array, options: UploadOptions = {}): FormData {
  const form = new FormData();
  const blobOptions = options.mimeType === null ? {} : { type: options.mimeType ?? "application/octet-stream" };
  form.append(options.fileField ?? "File", new File([bytes], options.name ?? "file.bin", blobOptions));
  if (options.type !== null) form.append(options.typeField ?? "Type", options.type ?? "image");
  return form;
}

export function postMedia(bytes: Uint8Array, options: UploadOptions = {}) {
  return call<Media>("/Medias", {
    method: "POST",
    rawBody: uploadForm(bytes, options),
    user: options.user,
    anonymous: options.anonymous,
    headers: options.headers,
  });
}

/** Uploads and expects 201 with a body that matches the route's schema. */
export async function uploadMedia(bytes: Uint8Array, options: UploadOptions = {}): Promise<Media> {
  const res = await postMedia(bytes, options);
  expect(res.status, res.text).toBe(201);
  return MediaSchema.parse(res.body);
}

export interface DataResult {
  status: number;
  headers: Headers;
  bytes: Uint8Array;
}

/** GET /Medias/{id}/Data with the raw bytes of the answer. */
export async function fetchData(
  id: string,
  query = "",
  headers: Record<string, string> = {},
  user: Partial<TestUser> = {},
): Promise<DataResult> {
  const response = await exports.default.fetch(
    new Request(`https://api.test/Medias/${id}/Data${query}`, { headers: { authorization: `Bearer ${await tokenFor(user)}`, ...headers } }),
  );
  return { status: response.status, headers: response.headers, bytes: new Uint8Array(await response.arrayBuffer()) };
}

export function sizeNames(media: Media): string[] {
  return media.sizes.map((s) => s.name);
}
