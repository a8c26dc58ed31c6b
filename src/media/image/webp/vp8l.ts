/**
 * Lossless WebP (VP8L, RFC 9649), decoded a row at a time: the entropy-coded pixels are kept in a
 * window as large as the farthest backward reference can reach (about a million pixels, 4 MiB), and
 * every completed row goes through the inverse transforms (colour indexing, subtract green, colour
 * and predictor transforms) at once, so memory does not grow with the picture. The transforms' own
 * small images (a sixteenth of the picture or less) are decoded whole. Also decodes the VP8L-coded
 * alpha planes of lossy WebPs.
 */
import { Slicer } from "../../../pkg/slicer";
import { CorruptImageError } from "../errors";

/** Pixels between two looks at the slicer. */
const CHECK_EVERY = 64 * 1024;

class BitReader {
  private value = 0;
  private count = 0;
  constructor(
    private readonly data: Uint8Array,
    private pos: number,
    private readonly end: number,
  ) {}

  /** Set once the data ran out (the rest reads as zeros): a truncated stream. */
  exhausted = false;

  private fill(): void {
    while (this.count <= 24) {
      let byte = 0;
      if (this.pos < this.end) byte = this.data[this.pos++]!;
      else if (this.pos++ > this.end + 4) this.exhausted = true;
      this.value = (this.value | (byte << this.count)) >>> 0;
      this.count += 8;
    }
  }

  read(bits: number): number {
    if (bits === 0) return 0;
    if (this.count < bits) this.fill();
    const v = this.value & ((1 << bits) - 1);
    this.value >>>= bits;
    this.count -= bits;
    return v;
  }

  /** The next 8 bits without consuming them. */
  peek8(): number {
    if (this.count < 8) this.fill();
    return this.value & 255;
  }

  skip(bits: number): void {
    this.value >>>= bits;
    this.count -= bits;
  }
}

/**
 * A canonical prefix code (as in Deflate: codes assigned by length, read bit by bit from their first
 * bit). Codes of up to 8 bits are looked up in one step; longer ones are walked.
 */
class PrefixCode {
  private readonly fast = new Int32Array(256); // (symbol << 4) | length, or -1
  private readonly counts = new Uint16Array(16);
  private readonly sorted: Uint16Array;
  private readonly single: number;

  constructor(lengths: Uint8Array) {
    let used = 0;
    let last = 0;
    for (let s = 0; s < lengths.length; s++) {
      if (lengths[s]) {
        this.counts[lengths[s]!]!++;
        used++;
        last = s;
      }
    }
    this.sorted = new Uint16Array(used);
    if (used === 0) throw new CorruptImageError("the WebP's lossless data has an empty prefix code");
    this.single = used === 1 ? last : -1;
    const offsets = new Uint16Array(16);
    for (let len = 1; len < 16; len++) offsets[len] = offsets[len - 1]! + this.counts[len - 1]!;
    for (let s = 0; s < lengths.length; s++) if (lengths[s]) this.sorted[offsets[lengths[s]!]!++] = s;
    // Check the lengths describe a complete code, and fill the one-step table.
    let left = 1;
    for (let len = 1; len < 16; len++) {
      left = left * 2 - this.counts[len]!;
      if (left < 0) throw new CorruptImageError("the WebP's lossless data has an over-subscribed prefix code");
    }
    if (left > 0 && used > 1) throw new CorruptImageError("the WebP's lossless data has an incomplete prefix code");
    this.fast.fill(-1);
    if (this.single >= 0) return;
    let code = 0;
    let index = 0;
    for (let len = 1; len <= 8; len++) {
      for (let i = 0; i < this.counts[len]!; i++, index++, code++) {
        // The code's bits arrive first bit first: the table is indexed by the reversed code.
        let reversed = 0;
        for (let b = 0; b < len; b++) reversed |= ((code >> (len - 1 - b)) & 1) << b;
        for (let fill = reversed; fill < 256; fill += 1 << len) this.fast[fill] = (this.sorted[index]! << 4) | len;
      }
      code <<= 1;
    }
  }

  read(r: BitReader): number {
    if (this.single >= 0) return this.single;
    const entry = this.fast[r.peek8()]!;
    if (entry >= 0) {
      r.skip(entry & 15);
      return entry >> 4;
    }
    // Longer than 8 bits: walk the canonical code (puff's way).
    let code = 0;
    let first = 0;
    let index = 0;
    for (let len = 1; len < 16; len++) {
      code |= r.read(1);
      const count = this.counts[len]!;
      if (code - first < count) return this.sorted[index + code - first]!;
      index += count;
      first = (first + count) << 1;
      code <<= 1;
    }
    throw new CorruptImageError("the WebP's lossless data has an invalid prefix code");
  }
}

const CODE_LENGTH_ORDER = [17, 18, 0, 1, 2, 3, 4, 5, 16, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];

function readPrefixCode(r: BitReader, alphabet: number): PrefixCode {
  const lengths = new Uint8Array(alphabet);
  if (r.read(1)) {
    // A simple code: one or two symbols.
    const two = r.read(1);
    const first = r.read(r.read(1) ? 8 : 1);
    if (first >= alphabet) throw new CorruptImageError("the WebP's lossless data names a symbol outside its alphabet");
    lengths[first] = 1;
    if (two) {
      const second = r.read(8);
      if (second >= alphabet) throw new CorruptImageError("the WebP's lossless data names a symbol outside its alphabet");
      lengths[second] = 1;
    }
    return new PrefixCode(lengths);
  }
  const codeLengthLengths = new Uint8Array(19);
  const n = 4 + r.read(4);
  for (let i = 0; i < n; i++) codeLengthLengths[CODE_LENGTH_ORDER[i]!] = r.read(3);
  const codeLengthCode = new PrefixCode(codeLengthLengths);
  let max = alphabet;
  if (r.read(1)) {
    max = 2 + r.read(2 + 2 * r.read(3));
    if (max > alphabet) throw new CorruptImageError("the WebP's lossless data has more code lengths than symbols");
  }
  let previous = 8;
  for (let s = 0; s < alphabet && max-- > 0;) {
    const code = codeLengthCode.read(r);
    if (code < 16) {
      lengths[s++] = code;
      if (code) previous = code;
      continue;
    }
    const repeat = code === 16 ? 3 + r.read(2) : code === 17 ? 3 + r.read(3) : 11 + r.read(7);
    if (s + repeat > alphabet) throw new CorruptImageError("the WebP's lossless data repeats code lengths past its alphabet");
    lengths.fill(code === 16 ? previous : 0, s, s + repeat);
    s += repeat;
  }
  return new PrefixCode(lengths);
}

/** The most prefix-code groups a picture may use (see decodeEntropyImage). */
const MAX_GROUPS = 4096;

/** Green (with length prefixes and cache indices), red, blue, alpha, distance. */
type Group = [PrefixCode, PrefixCode, PrefixCode, PrefixCode, PrefixCode];

function readGroup(r: BitReader, cacheSize: number): Group {
  return [
    readPrefixCode(r, 256 + 24 + cacheSize),
    readPrefixCode(r, 256),
    readPrefixCode(r, 256),
    readPrefixCode(r, 256),
    readPrefixCode(r, 40),
  ];
}

/** Length or distance from its prefix symbol and extra bits. */
function prefixValue(r: BitReader, symbol: number): number {
  if (symbol < 4) return symbol + 1;
  const extra = (symbol - 2) >> 1;
  return ((2 + (symbol & 1)) << extra) + r.read(extra) + 1;
}

/** The first 120 distance codes are (dx, dy) neighbours, packed as (dy << 4) | (8 - dx). */
const DISTANCE_MAP = [
  0x18, 0x07, 0x17, 0x19, 0x28, 0x06, 0x27, 0x29, 0x16, 0x1a, 0x26, 0x2a, 0x38, 0x05, 0x37, 0x39, 0x15, 0x1b, 0x36, 0x3a, 0x25, 0x2b, 0x48,
  0x04, 0x47, 0x49, 0x14, 0x1c, 0x35, 0x3b, 0x46, 0x4a, 0x24, 0x2c, 0x58, 0x45, 0x4b, 0x34, 0x3c, 0x03, 0x57, 0x59, 0x13, 0x1d, 0x56, 0x5a,
  0x23, 0x2d, 0x44, 0x4c, 0x55, 0x5b, 0x33, 0x3d, 0x68, 0x02, 0x67, 0x69, 0x12, 0x1e, 0x66, 0x6a, 0x22, 0x2e, 0x54, 0x5c, 0x43, 0x4d, 0x65,
  0x6b, 0x32, 0x3e, 0x78, 0x01, 0x77, 0x79, 0x53, 0x5d, 0x11, 0x1f, 0x64, 0x6c, 0x42, 0x4e, 0x76, 0x7a, 0x21, 0x2f, 0x75, 0x7b, 0x31, 0x3f,
  0x63, 0x6d, 0x52, 0x5e, 0x00, 0x74, 0x7c, 0x41, 0x4f, 0x10, 0x20, 0x62, 0x6e, 0x30, 0x73, 0x7d, 0x51, 0x5f, 0x40, 0x72, 0x7e, 0x61, 0x6f,
  0x50, 0x71, 0x7f, 0x60, 0x70,
];

function distance(code: number, width: number): number {
  if (code > 120) return code - 120;
  const packed = DISTANCE_MAP[code - 1]!;
  const d = (packed >> 4) * width + (8 - (packed & 15));
  return d < 1 ? 1 : d;
}

/** The farthest a backward reference reaches: the largest distance code, or seven rows and eight pixels. */
const maxDistance = (width: number) => Math.max((3 << 18) + (1 << 18) - 120 + 1, 7 * width + 8);

/**
 * Decodes an entropy-coded image of `width` x `height` (section 5), calling `row(y, pixels)` with
 * each completed row of ARGB values. With `whole`, the window is the whole image (a transform's
 * small image, returned at the end); otherwise it is just wide enough for backward references.
 */
async function decodeEntropyImage(
  r: BitReader,
  width: number,
  height: number,
  topLevel: boolean,
  row: ((y: number, pixels: Uint32Array) => void) | null,
  slicer: Slicer,
): Promise<Uint32Array> {
  let cacheBits = 0;
  if (r.read(1)) {
    cacheBits = r.read(4);
    if (cacheBits < 1 || cacheBits > 11) throw new CorruptImageError(`the WebP's lossless data has a colour cache of ${cacheBits} bits`);
  }
  const cacheSize = cacheBits ? 1 << cacheBits : 0;
  let metaBits = 0;
  let meta: Uint32Array | null = null;
  let metaWidth = 0;
  let groupCount = 1;
  if (topLevel && r.read(1)) {
    metaBits = r.read(3) + 2;
    metaWidth = Math.ceil(width / (1 << metaBits));
    meta = await decodeEntropyImage(r, metaWidth, Math.ceil(height / (1 << metaBits)), false, null, slicer);
    for (let i = 0; i < meta.length; i++) {
      meta[i] = (meta[i]! >> 8) & 0xffff;
      if (meta[i]! + 1 > groupCount) groupCount = meta[i]! + 1;
    }
  }
  // Each group is five prefix codes (about 6 KiB); libwebp's encoder writes at most a few thousand, and
  // a crafted file naming 65,536 would cost 360 MiB.
  if (groupCount > MAX_GROUPS)
    throw new CorruptImageError(`the WebP's lossless data names ${groupCount} prefix-code groups; at most ${MAX_GROUPS} are read`);
  const groups: Group[] = [];
  for (let g = 0; g < groupCount; g++) groups.push(readGroup(r, cacheSize));

  const whole = row === null;
  const total = width * height;
  // Whole rows, enough for the farthest reference plus the longest copy (4096) past a completed row.
  const windowSize = whole ? total : Math.min(total, Math.ceil((maxDistance(width) + 4096) / width + 2) * width);
  const window = new Uint32Array(windowSize);
  const cache = cacheSize ? new Uint32Array(cacheSize) : null;
  const cacheShift = 32 - cacheBits;
  const rowOut = whole ? null : new Uint32Array(width);
  const metaMask = (1 << metaBits) - 1;
  let pos = 0;
  let x = 0;
  let y = 0;
  let emittedRows = 0;
  let counted = 0;
  let group = groups[0]!;
  const groupAt = () => groups[meta![(y >> metaBits) * metaWidth + (x >> metaBits)]!]!;
  const insert = (argb: number) => {
    cache![Math.imul(argb, 0x1e35a7bd) >>> cacheShift] = argb;
  };
  while (pos < total) {
    if (meta && (x & metaMask) === 0) group = groupAt();
    const green = group[0].read(r);
    if (green < 256) {
      const red = group[1].read(r);
      const blue = group[2].read(r);
      const alpha = group[3].read(r);
      const argb = ((alpha << 24) | (red << 16) | (green << 8) | blue) >>> 0;
      window[whole ? pos : pos % windowSize] = argb;
      if (cache) insert(argb);
      pos++;
      if (++x === width) {
        x = 0;
        y++;
      }
    } else if (green < 256 + 24) {
      const length = prefixValue(r, green - 256);
      const dist = distance(prefixValue(r, group[4].read(r)), width);
      if (dist > pos || pos + length > total) throw new CorruptImageError("the WebP's lossless data refers back outside the picture");
      for (let i = 0; i < length; i++, pos++) {
        const argb = window[whole ? pos - dist : (pos - dist) % windowSize]!;
        window[whole ? pos : pos % windowSize] = argb;
        if (cache) insert(argb);
      }
      x += length;
      while (x >= width) {
        x -= width;
        y++;
      }
      // A copy can end inside another tile of the meta image.
      if (meta && pos < total) group = groupAt();
    } else {
      if (!cache) throw new CorruptImageError("the WebP's lossless data uses a colour cache it has not got");
      const argb = cache[green - 280]!;
      window[whole ? pos : pos % windowSize] = argb;
      insert(argb);
      pos++;
      if (++x === width) {
        x = 0;
        y++;
      }
    }
    if (r.exhausted) throw new CorruptImageError("the WebP's lossless data ends before its last pixel");
    if (!whole) {
      while (emittedRows < y) {
        const start = (emittedRows * width) % windowSize;
        rowOut!.set(window.subarray(start, start + width));
        row!(emittedRows++, rowOut!);
      }
    }
    // Pixels since the last look at the slicer (a row's transforms included, for a top-level image).
    if (pos - counted >= CHECK_EVERY) {
      if (slicer.spend(pos - counted)) await slicer.pause();
      counted = pos;
    }
  }
  return window;
}

// --- Transforms ------------------------------------------------------------------------------------

type Transform =
  | { kind: "predictor"; bits: number; data: Uint32Array; blocksWide: number }
  | { kind: "colour"; bits: number; data: Uint32Array; blocksWide: number }
  | { kind: "subtractGreen" }
  | { kind: "indexing"; palette: Uint32Array; bits: number };

const add = (a: number, b: number) =>
  (((a & 0xff00ff00) + (b & 0xff00ff00)) & 0xff00ff00) | (((a & 0x00ff00ff) + (b & 0x00ff00ff)) & 0x00ff00ff);
const average2 = (a: number, b: number) => (((a ^ b) & 0xfefefefe) >>> 1) + (a & b);

function channelClamp(v: number): number {
  return v < 0 ? 0 : v > 255 ? 255 : v;
}

function select(L: number, T: number, TL: number): number {
  let pL = 0;
  let pT = 0;
  for (let s = 0; s < 32; s += 8) {
    const l = (L >>> s) & 255;
    const t = (T >>> s) & 255;
    const tl = (TL >>> s) & 255;
    const p = l + t - tl;
    pL += Math.abs(p - l);
    pT += Math.abs(p - t);
  }
  return pL < pT ? L : T;
}

function clampAddSubtractFull(a: number, b: number, c: number): number {
  let out = 0;
  for (let s = 0; s < 32; s += 8) out |= channelClamp(((a >>> s) & 255) + ((b >>> s) & 255) - ((c >>> s) & 255)) << s;
  return out >>> 0;
}

function clampAddSubtractHalf(a: number, b: number): number {
  let out = 0;
  for (let s = 0; s < 32; s += 8) {
    const x = (a >>> s) & 255;
    out |= channelClamp(x + Math.trunc((x - ((b >>> s) & 255)) / 2)) << s;
  }
  return out >>> 0;
}

function predict(mode: number, L: number, T: number, TR: number, TL: number): number {
  switch (mode) {
    case 0:
      return 0xff000000;
    case 1:
      return L;
    case 2:
      return T;
    case 3:
      return TR;
    case 4:
      return TL;
    case 5:
      return average2(average2(L, TR), T);
    case 6:
      return average2(L, TL);
    case 7:
      return average2(L, T);
    case 8:
      return average2(TL, T);
    case 9:
      return average2(T, TR);
    case 10:
      return average2(average2(L, TL), average2(T, TR));
    case 11:
      return select(L, T, TL);
    case 12:
      return clampAddSubtractFull(L, T, TL);
    case 13:
      return clampAddSubtractHalf(average2(L, T), TL);
    default:
      // Modes 14 and 15 are not defined; libwebp predicts black for them.
      return 0xff000000;
  }
}

const delta = (t: number, c: number) => (((t << 24) >> 24) * ((c << 24) >> 24)) >> 5;

/**
 * Decodes a VP8L bitstream from just after its header (or the whole ALPH payload), calling `row(y,
 * argb)` with each row of the picture, after every inverse transform.
 */
async function decodeStream(
  r: BitReader,
  width: number,
  height: number,
  row: (y: number, argb: Uint32Array) => void,
  slicer: Slicer,
): Promise<void> {
  const transforms: Transform[] = [];
  let codedWidth = width;
  const seen = new Set<number>();
  while (r.read(1)) {
    const type = r.read(2);
    if (seen.has(type)) throw new CorruptImageError("the WebP's lossless data repeats a transform");
    seen.add(type);
    if (type === 0 || type === 1) {
      const bits = r.read(3) + 2;
      const blocksWide = Math.ceil(codedWidth / (1 << bits));
      const data = await decodeEntropyImage(r, blocksWide, Math.ceil(height / (1 << bits)), false, null, slicer);
      transforms.push(type === 0 ? { kind: "predictor", bits, data, blocksWide } : { kind: "colour", bits, data, blocksWide });
    } else if (type === 2) {
      transforms.push({ kind: "subtractGreen" });
    } else {
      const size = r.read(8) + 1;
      const palette = await decodeEntropyImage(r, size, 1, false, null, slicer);
      for (let i = 1; i < size; i++) palette[i] = add(palette[i]!, palette[i - 1]!);
      const bits = size <= 2 ? 3 : size <= 4 ? 2 : size <= 16 ? 1 : 0;
      transforms.push({ kind: "indexing", palette, bits });
      codedWidth = Math.ceil(codedWidth / (1 << bits));
    }
  }
  // Per transform, its previous output row (the predictor reads it) and its output buffer, widths
  // as they are at that stage (colour indexing widens its output from the packed width).
  const stages = transforms.map(() => ({ previous: new Uint32Array(width), out: new Uint32Array(width) }));
  await decodeEntropyImage(
    r,
    codedWidth,
    height,
    true,
    (y, coded) => {
      let current: Uint32Array = coded;
      let currentWidth = codedWidth;
      for (let t = transforms.length - 1; t >= 0; t--) {
        const transform = transforms[t]!;
        const stage = stages[t]!;
        const out = stage.out;
        if (transform.kind === "subtractGreen") {
          for (let x = 0; x < currentWidth; x++) {
            const p = current[x]!;
            const g = (p >>> 8) & 255;
            out[x] = ((p & 0xff00ff00) | ((((p >>> 16) + g) & 255) << 16) | ((p + g) & 255)) >>> 0;
          }
        } else if (transform.kind === "colour") {
          const blockRow = (y >> transform.bits) * transform.blocksWide;
          for (let x = 0; x < currentWidth; x++) {
            const e = transform.data[blockRow + (x >> transform.bits)]!;
            const p = current[x]!;
            const g = (p >>> 8) & 255;
            const red = ((p >>> 16) + delta(e & 255, g)) & 255;
            const blue = (p + delta((e >>> 8) & 255, g) + delta((e >>> 16) & 255, red)) & 255;
            out[x] = ((p & 0xff00ff00) | (red << 16) | blue) >>> 0;
          }
        } else if (transform.kind === "predictor") {
          const previous = stage.previous;
          const blockRow = (y >> transform.bits) * transform.blocksWide;
          for (let x = 0; x < currentWidth; x++) {
            let prediction: number;
            if (y === 0) prediction = x === 0 ? 0xff000000 : out[x - 1]!;
            else if (x === 0) prediction = previous[0]!;
            else {
              const mode = (transform.data[blockRow + (x >> transform.bits)]! >>> 8) & 15;
              // The rightmost pixel's top-right is the leftmost pixel of its own row.
              const TR = x === currentWidth - 1 ? out[0]! : previous[x + 1]!;
              prediction = predict(mode, out[x - 1]!, previous[x]!, TR, previous[x - 1]!);
            }
            out[x] = add(current[x]!, prediction) >>> 0;
          }
          stage.previous.set(out.subarray(0, currentWidth));
        } else {
          const { palette, bits } = transform;
          const perByte = 1 << bits;
          const bitsPerPixel = 8 >> bits;
          const mask = (1 << bitsPerPixel) - 1;
          for (let x = 0; x < width; x++) {
            const packed = (current[x >> bits]! >>> 8) & 255;
            const index = (packed >> ((x & (perByte - 1)) * bitsPerPixel)) & mask;
            out[x] = index < palette.length ? palette[index]! : 0;
          }
          currentWidth = width;
        }
        current = out;
      }
      row(y, current);
    },
    slicer,
  );
}

export interface Vp8lHeader {
  width: number;
  height: number;
  hasAlpha: boolean;
}

export function vp8lHeader(data: Uint8Array): Vp8lHeader {
  if (data.length < 5 || data[0] !== 0x2f) throw new CorruptImageError("the WebP's lossless data has no signature");
  const bits = (data[1]! | (data[2]! << 8) | (data[3]! << 16) | (data[4]! << 24)) >>> 0;
  if (bits >>> 29 !== 0) throw new CorruptImageError("the WebP's lossless data has an unknown version");
  return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1, hasAlpha: ((bits >>> 28) & 1) === 1 };
}

/** Decodes a VP8L chunk, calling `row(y, argb)` with each row. */
export async function decodeVp8l(
  data: Uint8Array,
  row: (y: number, argb: Uint32Array) => void,
  slicer: Slicer = new Slicer(),
): Promise<Vp8lHeader> {
  const header = vp8lHeader(data);
  await decodeStream(new BitReader(data, 5, data.length), header.width, header.height, row, slicer);
  return header;
}

/** Decodes a VP8L-compressed alpha plane (an ALPH payload after its header byte): rows of alpha (the green channel). */
export async function decodeVp8lAlpha(
  data: Uint8Array,
  width: number,
  height: number,
  row: (y: number, alpha: Uint8Array) => void,
  slicer: Slicer,
): Promise<void> {
  const alpha = new Uint8Array(width);
  await decodeStream(
    new BitReader(data, 0, data.length),
    width,
    height,
    (y, argb) => {
      for (let x = 0; x < width; x++) alpha[x] = (argb[x]! >>> 8) & 255;
      row(y, alpha);
    },
    slicer,
  );
}
