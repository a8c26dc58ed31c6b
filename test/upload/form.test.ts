/** The streaming multipart reader on its own: any split of the body into chunks reads the same parts. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formBoundary, readForm } from "../../src/pkg/multipart";

const encoder = new TextEncoder();

function streamOf(bytes: Uint8Array, cuts: number[]): ReadableStream<Uint8Array> {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const pieces: Uint8Array[] = [];
  let last = 0;
  for (const point of [...points, bytes.length]) {
    if (point > last) pieces.push(bytes.slice(last, point));
    last = point;
  }
  return new ReadableStream({
    pull(controller) {
      const next = pieces.shift();
      if (next) controller.enqueue(next);
      else controller.close();
    },
  });
}

async function readAll(stream: ReadableStream<Uint8Array>, boundary: string) {
  const parts: { name: string; filename: string | null; contentType: string | null; body: number[] }[] = [];
  for await (const part of readForm(stream, boundary)) {
    const body: number[] = [];
    for await (const chunk of part.chunks) body.push(...chunk);
    parts.push({ ...part.head, body });
  }
  return parts;
}

async function serialise(form: FormData): Promise<{ bytes: Uint8Array; boundary: string }> {
  const response = new Response(form);
  return {
    bytes: new Uint8Array(await response.arrayBuffer()),
    boundary: formBoundary(response.headers.get("content-type") ?? undefined)!,
  };
}

describe("readForm", () => {
  it("reads the same parts however the body is split into chunks", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 3000 }),
        fc.string({ maxLength: 40 }),
        fc.array(fc.nat(), { maxLength: 40 }),
        async (fileBytes, text, cuts) => {
          const form = new FormData();
          form.append("DataTypeId", text);
          form.append("File", new File([fileBytes], "data.bin", { type: "application/x-test" }));
          const { bytes, boundary } = await serialise(form);
          const parts = await readAll(streamOf(bytes, cuts), boundary);
          expect(parts).toEqual([
            { name: "DataTypeId", filename: null, contentType: null, body: [...encoder.encode(text)] },
            { name: "File", filename: "data.bin", contentType: "application/x-test", body: [...fileBytes] },
          ]);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("finds a delimiter split across chunks inside a part whose bytes resemble it", async () => {
    const boundary = "XyZ";
    // Everything but CRLF "--XyZ" itself, which a client's boundary never occurs as inside content.
    const tricky = "--XyZ no \r\n-XyZ \r\n--Xy\r\n--X";
    const body = encoder.encode(
      `preamble\r\n--${boundary}\r\nContent-Disposition: form-data; name="a"\r\n\r\n${tricky}\r\n--${boundary}--\r\nepilogue`,
    );
    for (let cut = 1; cut < body.length; cut++) {
      const parts = await readAll(streamOf(body, [cut, cut + 1, cut + 3]), boundary);
      expect(parts.map((p) => new TextDecoder().decode(new Uint8Array(p.body)))).toEqual([tricky]);
    }
  });

  it("reads filename* (RFC 5987) before filename, and %22 escapes in filename", async () => {
    const body = encoder.encode(
      [
        "--b",
        `Content-Disposition: form-data; name="File"; filename="fallback.csv"; filename*=UTF-8''M%C3%A5linger.csv`,
        "",
        "x",
        "--b",
        'Content-Disposition: form-data; name="Other"; filename="say %22hi%22.txt"',
        "",
        "y",
        "--b--",
      ].join("\r\n"),
    );
    const parts = await readAll(streamOf(body, []), "b");
    expect(parts.map((p) => p.filename)).toEqual(["Målinger.csv", 'say "hi".txt']);
  });

  it.each([
    ["no boundary at all", "just text"],
    ["a part without Content-Disposition", "--b\r\nContent-Type: text/plain\r\n\r\nx\r\n--b--"],
    ["a body ending inside a part", '--b\r\nContent-Disposition: form-data; name="a"\r\n\r\nxyz'],
    ["a body ending inside headers", '--b\r\nContent-Disposition: form-data; name="a"'],
  ])("refuses %s", async (_label, text) => {
    await expect(readAll(streamOf(encoder.encode(text), []), "b")).rejects.toMatchObject({ code: "ValidationFailed" });
  });

  it("reads the boundary from the content type", () => {
    expect(formBoundary('multipart/form-data; boundary="a b"')).toBe("a b");
    expect(formBoundary("Multipart/Form-Data;boundary=xyz")).toBe("xyz");
    expect(formBoundary("application/json")).toBeNull();
    expect(formBoundary("multipart/form-data")).toBeNull();
  });
});
