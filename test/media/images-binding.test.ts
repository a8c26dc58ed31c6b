/**
 * The Cloudflare Images binding as the resizer (IMAGE_RESIZER = "images"), against Miniflare's local
 * Images binding (sharp behind the binding's protocol): versions of the right sizes and types, and a
 * fall back to the WASM path for what the binding does not read or an EXIF rotation.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { resizeWithImagesBinding } from "../../src/media/image/images-binding";
import { sample } from "./support/media";

const images = (env as unknown as { IMAGES: ImagesBinding }).IMAGES;

describe("the Images binding as the resizer", () => {
  it.each([
    { file: "phone-12mp.jpg", format: "jpeg", size: [4032, 3024], medium: [1000, 750], small: [256, 192], type: "image/jpeg" },
    { file: "photo.webp", format: "webp", size: [1400, 1000], medium: [1000, 714], small: [256, 183], type: "image/jpeg" },
    { file: "alpha.png", format: "png", size: [1200, 900], medium: [1000, 750], small: [256, 192], type: "image/png" },
    { file: "picture.gif", format: "gif", size: [1200, 800], medium: [1000, 667], small: [256, 171], type: "image/png" },
  ] as const)("$file: Medium $medium and Small $small as $type", async ({ file, format, size, medium, small, type }) => {
    const outcome = await resizeWithImagesBinding(images, format, sample(file));
    expect(outcome).not.toBeNull();
    expect(outcome).toMatchObject({ integrity: "passed", width: size[0], height: size[1], detail: null });
    expect(outcome!.versions.map((v) => [v.size, v.width, v.height, v.contentType])).toEqual([
      ["Medium", medium[0], medium[1], type],
      ["Small", small[0], small[1], type],
    ]);
    // The bytes are the type they claim.
    const jpeg = outcome!.versions[0]!.bytes[0] === 0xff && outcome!.versions[0]!.bytes[1] === 0xd8;
    expect(jpeg).toBe(type === "image/jpeg");
  });

  it("leaves to the WASM path what it should not do: an EXIF rotation, formats the binding does not read, broken files", async () => {
    expect(await resizeWithImagesBinding(images, "jpeg", sample("rotated.jpg"))).toBeNull();
    expect(await resizeWithImagesBinding(images, "svg", sample("drawing.svg"))).toBeNull();
    expect(await resizeWithImagesBinding(images, "jpeg", sample("photo.jpg").subarray(0, 300))).toBeNull();
  });
});
