// A GIF of one flat colour whose LZW data is as short as the format allows: each code stands for one
// pixel more than the one before (the run's string grows by a pixel a code), and the table is
// cleared when full. 10,950 x 10,950 pixels (119.9 MP) take about 82 KB: the hostile workload of
// issue 32 ("a GIF's pixel count costs far more than its bytes suggest").

/** LSB-first bit writer packing GIF codes into sub-blocks of at most 255 bytes. */
function codeWriter() {
  const bytes = [];
  let bits = 0;
  let count = 0;
  return {
    write(code, width) {
      bits |= code << count;
      count += width;
      while (count >= 8) {
        bytes.push(bits & 255);
        bits >>>= 8;
        count -= 8;
      }
    },
    finish() {
      if (count > 0) bytes.push(bits & 255);
      const blocks = [];
      for (let i = 0; i < bytes.length; i += 255) {
        const block = bytes.slice(i, i + 255);
        blocks.push(block.length, ...block);
      }
      blocks.push(0);
      return blocks;
    },
  };
}

/**
 * The LZW codes of `pixels` copies of colour 0, written the way gif.ts (and every GIF decoder)
 * reads them: the decoder adds a string after every code but the first after a clear, and widens
 * its codes when the next free code reaches 1 << width.
 */
function flatRun(pixels, minCodeSize) {
  const clear = 1 << minCodeSize;
  const end = clear + 1;
  const out = codeWriter();
  let width = minCodeSize + 1;
  let next = end + 1;
  let first = true;
  const emit = (code) => {
    out.write(code, width);
    if (code === clear) {
      width = minCodeSize + 1;
      next = end + 1;
      first = true;
      return;
    }
    if (!first && next < 4096) {
      next++;
      if (next === 1 << width && width < 12) width++;
    }
    first = false;
  };
  emit(clear);
  let left = pixels;
  // The string the next code may stand for: after a clear, one pixel; then one more a code.
  let length = 1;
  while (left > 0) {
    if (next >= 4096) {
      emit(clear);
      length = 1;
    }
    const take = Math.min(length, left);
    // Length 1 is the root code 0; a run of n >= 2 is the code added n - 1 strings after the first free one.
    emit(take === 1 ? 0 : end + take - 1);
    left -= take;
    length = take + 1;
  }
  emit(end);
  return out.finish();
}

/** A `width` x `height` GIF89a of one grey, as small as LZW makes it. */
export function flatGif(width, height) {
  const header = [...Buffer.from("GIF89a"), width & 255, width >> 8, height & 255, height >> 8, 0xf0, 0, 0];
  const palette = [128, 128, 128, 255, 255, 255];
  const image = [0x2c, 0, 0, 0, 0, width & 255, width >> 8, height & 255, height >> 8, 0];
  const minCodeSize = 2;
  return Uint8Array.from([...header, ...palette, ...image, minCodeSize, ...flatRun(width * height, minCodeSize), 0x3b]);
}
