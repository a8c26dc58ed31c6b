/**
 * The numbers behind the image pipeline's memory design (docs/benchmarks.md, "Images", has the
 * measurements). An isolate has 128 MB for everything: the JS heap, ArrayBuffers and WASM memory,
 * and WASM memory never shrinks while its instance lives.
 */

/** Spec 8: Medium and Small are at most this many pixels on the longer side. */
export const MEDIUM_MAX_SIDE = 1000;
export const SMALL_MAX_SIDE = 256;

/**
 * JPEGs are decoded by our own decoder at 1/2, 1/4 or 1/8 scale in the DCT domain, block by block:
 * a sequential 12 MP photo needs its compressed bytes plus ~1 MB of scaled planes. Pixels cost CPU
 * (~8 ms per MP here), not memory, so the limit is set above the largest phone sensors (108 MP).
 */
export const JPEG_MAX_PIXELS = 120_000_000;

/**
 * A progressive JPEG keeps every coefficient until its last scan: 2 bytes per sample, i.e. 3 bytes
 * per pixel at 4:2:0 and 6 at 4:4:4. 40 MiB admits a 12 MP phone photo at 4:2:0 (36.6 MB; measured
 * peak growth of the process 74 MiB) and 6.9 MP at 4:4:4.
 */
export const JPEG_MAX_COEFFICIENT_BYTES = 40 * 1024 * 1024;

/**
 * Non-interlaced PNGs are decoded row by row and averaged into boxes as they arrive
 * (png-stream.ts): memory is the file, two rows and the reduced image, so the limit is CPU time
 * (measured in docs/benchmarks.md), set like the JPEG one.
 */
export const PNG_MAX_PIXELS = 120_000_000;

/**
 * The time of one decode follows the picture's pixels, and lossless formats can describe millions of
 * pixels in a few bytes: an 82 KB GIF of one colour declares 120 MP (each LZW code stands for one
 * pixel more than the last), about 3.5 s of decoding here. Every decoded format (GIF, PNG, TIFF, BMP,
 * WebP, HEIC, AVIF and JPEG alike) may have up to PIXELS_WITHOUT_RATIO pixels whatever its size;
 * beyond, its file must hold a byte for every MAX_PIXELS_PER_BYTE pixels, so the work of a decode is
 * bounded by what the client sent. Real pictures stay far below: phone photos 2 to 10 pixels a byte,
 * screenshots and drawings up to about 100; a 120 MP picture needs a file of 470 KB or more. An image
 * past it keeps its original and says why (docs/decisions.md, "Decoding never holds the thread").
 */
export const PIXELS_WITHOUT_RATIO = 16_000_000;
export const MAX_PIXELS_PER_BYTE = 256;

/**
 * A photon instance whose memory grew past this is dropped after use (its memory is freed with it)
 * and the next image instantiates a fresh one (~2 ms); smaller ones are kept warm.
 */
export const PHOTON_RETAIN_BYTES = 24 * 1024 * 1024;

/**
 * The longest side decoded, whatever the format: row decoders hold a row or two, and a 120 MP picture
 * one pixel high would make a single 16-bit RGBA row 960 MB. No camera or scanner goes near it.
 */
export const MAX_SIDE = 100_000;

/** JPEG quality of resized versions of JPEG and lossy WebP originals. */
export const JPEG_QUALITY = 85;

/**
 * A HEIF that is one coded picture (not a grid of tiles) is decoded whole by libheif: YCbCr planes,
 * the decoder's own buffers and the RGBA picture, about 10 bytes per pixel of WASM memory. Grid
 * images (iPhones write 512 x 512 tiles) are decoded a tile at a time and are limited only by
 * HEIF_MAX_PIXELS.
 */
export const HEIF_MAX_TILE_PIXELS = 8_000_000;
export const HEIF_MAX_PIXELS = 120_000_000;
/**
 * The most memory a libheif instance may grow to (wasm-memory.ts): measured 86 MiB for an 8 MP single
 * picture with its 7.5 MiB file copied in, 16 MiB for an iPhone grid. A coded picture larger than its
 * header says stops here instead of taking the isolate over 128 MB.
 */
export const HEIF_MAX_WASM_BYTES = 100 * 1024 * 1024;

/**
 * The most pixels one coded AVIF picture may have: libavif/dav1d (avif.ts) decodes a picture whole, in
 * a fresh WASM instance per image. Measured growth of workerd for one decode after a warm-up (bench,
 * docs/benchmarks.md): 62 MiB at 1 MP, 106 MiB at 3 MP, 140 MiB at 4 MP (about 40 MiB for the
 * instance and 25 MiB a megapixel). Up to 2 MP (about 90 MiB) the versions are made here. A grid AVIF
 * is decoded tile by tile, so this bounds its tiles, and the picture may have up to HEIF_MAX_PIXELS.
 * A larger single picture keeps its original and says why (the Images binding makes the versions
 * where enabled).
 */
export const AVIF_MAX_PIXELS = 2_000_000;
/**
 * The most memory a libavif instance may grow to (wasm-memory.ts): measured 48 MiB for a 2 MP picture
 * (photo-like, 0.6 MiB file), 16 MiB for a grid of 600 x 450 tiles; a 4 MP picture needs about 107.
 * A coded picture larger than its header says stops here.
 */
export const AVIF_MAX_WASM_BYTES = 64 * 1024 * 1024;
