/**
 * The image bench's Worker: the real pipeline (src/media/image) over JPEGs held in memory, so a
 * request measures producing Medium and Small and nothing else (no multipart parsing, R2 or D1).
 *
 *   PUT  /images/{name}            keep the body as image `name`
 *   POST /process/{name}?mode=...  pipeline (default): processImage, as POST /Medias runs it
 *                                  (&format=png etc. for other formats than JPEG;
 *                                  &refusals=1 answers a refused image with its reason);
 *                                  photon: the naive way (photon decodes the whole image, resizes
 *                                  and encodes), to show what the pipeline avoids
 *   GET  /noop                     the round trip, to subtract
 *
 * Answers carry the versions made and photon's memory figures (WASM memory is exact; the JS heap is
 * not observable from inside workerd, so the bench measures the process from outside).
 */
import { initPhoton, PhotonImage, resize as photonResize, SamplingFilter } from "@cf-wasm/photon/others";
import * as photonWasm from "../node_modules/@cf-wasm/photon/dist/lib/photon_rs_bg.wasm";
import type { ImageFormat } from "../src/media/image/formats";
import { processImage } from "../src/media/image/pipeline";
import { photonStats, withPhoton } from "../src/media/image/photon/codec";
import { fitWithin } from "../src/media/image/resample";

const images = new Map<string, Uint8Array>();

/** The naive pipeline, through the package's own glue (initialised on first use, never replaced). */
function naivePhoton(bytes: Uint8Array): { size: string; width: number; height: number; bytes: number }[] {
  if (!initPhoton.initialized) initPhoton.sync({ module: (photonWasm as unknown as { default: WebAssembly.Module }).default });
  const image = PhotonImage.new_from_byteslice(bytes);
  const out = [];
  try {
    for (const [size, limit] of [
      ["Medium", 1000],
      ["Small", 256],
    ] as const) {
      const target = fitWithin(image.get_width(), image.get_height(), limit);
      const resized = photonResize(image, target.width, target.height, SamplingFilter.CatmullRom);
      out.push({ size, width: target.width, height: target.height, bytes: resized.get_bytes_jpeg(85).length });
      resized.free();
    }
  } finally {
    image.free();
  }
  return out;
}

export default {
  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const [, action, name] = url.pathname.split("/");
    if (action === "noop") return Response.json({});
    if (action === "images" && name && request.method === "PUT") {
      images.set(name, new Uint8Array(await request.arrayBuffer()));
      return Response.json({ name, bytes: images.get(name)!.length });
    }
    if (action === "process" && name && request.method === "POST") {
      const bytes = images.get(name);
      if (!bytes) return Response.json({ error: `no image ${name}` }, { status: 404 });
      if (url.searchParams.get("mode") === "photon") {
        const versions = naivePhoton(bytes);
        return Response.json({ versions });
      }
      const format = (url.searchParams.get("format") ?? "jpeg") as ImageFormat;
      const outcome = await processImage(format, bytes);
      // &refusals=1: an image the pipeline refuses (too large, not decoded) is an answer, not an error.
      if (outcome.integrity !== "passed" && url.searchParams.get("refusals") === "1")
        return Response.json({ integrity: outcome.integrity, refused: outcome.detail, versions: [] });
      if (outcome.integrity !== "passed") return Response.json({ error: outcome.detail }, { status: 500 });
      return Response.json({
        decoded: outcome.decoded,
        versions: outcome.versions.map((v) => ({ size: v.size, width: v.width, height: v.height, bytes: v.bytes.length })),
        photon: photonStats(),
      });
    }
    if (action === "stats") return Response.json({ photon: photonStats() });
    if (action === "warm") {
      // Instantiate photon and run every code path once on a tiny image.
      withPhoton(() => undefined);
      return Response.json({ photon: photonStats() });
    }
    return new Response("not found", { status: 404 });
  },
};
