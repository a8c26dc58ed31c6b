/** Issue 12: gzip and deflate request bodies are read; other encodings are a 415. */
import { describe, expect, it } from "vitest";
import { call } from "../support/http";

async function compress(text: string, format: "gzip" | "deflate"): Promise<Uint8Array> {
  return new Uint8Array(await new Response(new Blob([text]).stream().pipeThrough(new CompressionStream(format))).arrayBuffer());
}

describe("Content-Encoding on request bodies", () => {
  for (const format of ["gzip", "deflate"] as const) {
    it(`reads a ${format} JSON body`, async () => {
      const name = `${format} ${crypto.randomUUID()}`;
      const res = await call("/Categories", {
        method: "POST",
        rawBody: await compress(JSON.stringify({ name }), format),
        headers: { "content-type": "application/json", "content-encoding": format },
      });
      expect(res.status, res.text).toBe(201);
      expect(res.body.name).toBe(name);
    });
  }

  it("applies the body limit to the decompressed size", async () => {
    const huge = JSON.stringify({ name: "x".repeat(3 * 1024 * 1024) });
    const packed = await compress(huge, "gzip");
    expect(packed.length).toBeLessThan(100_000);
    const res = await call("/Categories", {
      method: "POST",
      rawBody: packed,
      headers: { "content-type": "application/json", "content-encoding": "gzip" },
    });
    expect(res.status).toBe(413);
  });

  it("answers 415 for an encoding it does not read, and 400 for a body that is not gzip", async () => {
    const br = await call("/Categories", {
      method: "POST",
      rawBody: "abc",
      headers: { "content-type": "application/json", "content-encoding": "br" },
    });
    expect(br.status).toBe(415);
    expect(br.body.code).toBe("UnsupportedMediaType");
    const broken = await call("/Categories", {
      method: "POST",
      rawBody: "not gzip at all",
      headers: { "content-type": "application/json", "content-encoding": "gzip" },
    });
    expect(broken.status).toBe(400);
  });
});
