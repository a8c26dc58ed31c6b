/**
 * Image decoding never holds the thread (issue 32; src/media/image/slice.ts): a large decode gives the
 * thread back between slices, so other requests are answered while it runs, and the limits keep a
 * small file from asking for a long decode. Ordering is checked with the runtime's own scheduling (a
 * request sent from inside the decode, at its first pause), never with wall-clock times.
 */
import { describe, expect, it } from "vitest";
import { pauseObservers, type SliceKind } from "../../src/pkg/slicer";
import { MAX_PIXELS_PER_BYTE, PIXELS_WITHOUT_RATIO } from "../../src/media/image/limits";
import { flatGif } from "../fixtures/hostile/flat-gif.mjs";
import { call } from "../support/http";
import { fetchData, postMedia, sizeNames, uploadMedia } from "./support/media";

/** Runs `work` while `observe` hears every decode pause of this isolate (the upload's body reader pauses too; not counted). */
async function observingPauses<T>(observe: (pauses: number) => void, work: () => Promise<T>): Promise<T> {
  const decodes = (pauses: number, kind: SliceKind) => {
    if (kind === "decode") observe(pauses);
  };
  pauseObservers.add(decodes);
  try {
    return await work();
  } finally {
    pauseObservers.delete(decodes);
  }
}

describe("decoding in slices", () => {
  it("a request sent while a 16 MP GIF decodes is answered while the decode still runs", async () => {
    const bytes = flatGif(4000, 4000);
    const events: string[] = [];
    let pauses = 0;
    let pausesWhenAnswered = -1;
    let probe: Promise<void> | undefined;
    const created = await observingPauses(
      (n) => {
        pauses++;
        // At the decode's first pause, another client's request arrives.
        if (n === 1 && !probe) {
          probe = call("/Categories").then((answer) => {
            expect(answer.status).toBe(200);
            pausesWhenAnswered = pauses;
            events.push("other request answered");
          });
        }
      },
      async () => {
        const answer = await postMedia(bytes, { name: "flat.gif", mimeType: "image/gif" });
        events.push("upload answered");
        return answer;
      },
    );
    await probe;
    expect(created.status, created.text).toBe(201);
    expect(created.body.recognition).toMatchObject({ detectedFormat: "gif", integrity: "passed" });
    expect(sizeNames(created.body)).toEqual(["Original", "Medium", "Small"]);
    // Answered between two slices of the decode, which went on afterwards: had the decode held the
    // thread, the request could only have been served after its last slice.
    expect(events).toEqual(["other request answered", "upload answered"]);
    expect(pausesWhenAnswered).toBeGreaterThan(0);
    expect(pauses).toBeGreaterThan(pausesWhenAnswered + 10);
  });

  it("two large uploads at once both get their versions (they take turns at the isolate's decoder)", async () => {
    const [a, b] = await Promise.all([
      uploadMedia(flatGif(3000, 2000), { name: "a.gif", mimeType: "image/gif" }),
      uploadMedia(flatGif(2000, 3000), { name: "b.gif", mimeType: "image/gif" }),
    ]);
    expect(sizeNames(a)).toEqual(["Original", "Medium", "Small"]);
    expect(sizeNames(b)).toEqual(["Original", "Medium", "Small"]);
  });
});

describe("the limits bound the time of one decode", () => {
  it("an 82 KB GIF declaring 120 MP keeps its original, says why, and is never decoded", async () => {
    const bytes = flatGif(10950, 10950);
    expect(bytes.length).toBeLessThan(90_000);
    let pauses = 0;
    const media = await observingPauses(
      () => pauses++,
      () => uploadMedia(bytes, { name: "bomb.gif", mimeType: "image/gif" }),
    );
    expect(pauses).toBe(0);
    expect(media.recognition).toMatchObject({ detectedFormat: "gif", integrity: "notChecked" });
    expect(media.recognition.detail).toMatch(/pixels per byte/);
    expect(media.recognition.detail).toContain(`${MAX_PIXELS_PER_BYTE} pixels per byte`);
    expect(media).toMatchObject({ width: 10950, height: 10950 });
    expect(sizeNames(media)).toEqual(["Original"]);
    const medium = await fetchData(media.id, "?size=Medium");
    expect(medium.status).toBe(200);
    expect(medium.headers.get("x-media-size")).toBe("Original");
    expect(medium.headers.get("x-media-size-fallback")).toBe("true");
  });

  it("up to 16 MP a picture is decoded whatever its size in bytes", async () => {
    const side = Math.floor(Math.sqrt(PIXELS_WITHOUT_RATIO));
    const bytes = flatGif(side, side);
    expect((side * side) / bytes.length).toBeGreaterThan(MAX_PIXELS_PER_BYTE);
    const media = await uploadMedia(bytes, { name: "flat.gif", mimeType: "image/gif" });
    expect(media.recognition.integrity).toBe("passed");
  });

  it("a GIF whose first frame is larger than its screen is not decoded", async () => {
    const bytes = flatGif(2000, 2000);
    // The logical screen says 100 x 100; the frame stays 2000 x 2000.
    bytes.set([100, 0, 100, 0], 6);
    const media = await uploadMedia(bytes, { name: "frame.gif", mimeType: "image/gif" });
    expect(media.recognition).toMatchObject({ integrity: "notChecked" });
    expect(media.recognition.detail).toMatch(/first frame \(2000x2000\) is larger than its screen \(100x100\)/);
  });
});
