/**
 * Entropy-coded segment reading for the JPEG decoder: a big-endian bit reader that removes byte
 * stuffing and stops at markers, and canonical Huffman tables with a 9-bit lookahead table.
 * Reading past the end of a segment yields zero bits, as libjpeg does, but is counted: a complete
 * stream never needs them, so using any is how truncated or tampered data is detected.
 */
import { CorruptImageError } from "../errors";

const LOOKAHEAD = 9;
/**
 * Zero bits a reader may feed past the segment's end before giving up. A complete stream needs
 * none; a header that declares far more blocks than its data holds (a bomb, or a truncated file)
 * would otherwise be "decoded" from zeros to the end.
 */
const MAX_SYNTHETIC_BITS = 1 << 16;

export interface HuffmanTable {
  /** (code length << 8) | symbol for every 9-bit prefix of a code of at most 9 bits, else -1. */
  fast: Int32Array;
  /**
   * For AC tables: when a 9-bit prefix holds a whole run/size code AND its value bits,
   * (value << 10) | (run << 5) | total bits; else 0 (libjpeg-turbo's and stb_image's fast AC path).
   */
  fastAc: Int32Array;
  maxcode: Int32Array;
  mincode: Int32Array;
  valptr: Int32Array;
  symbols: Uint8Array;
}

/** Builds a table from a DHT segment's 16 code-length counts and its symbols (JPEG annex C). */
export function buildHuffmanTable(counts: Uint8Array, symbols: Uint8Array): HuffmanTable {
  const fast = new Int32Array(1 << LOOKAHEAD).fill(-1);
  const maxcode = new Int32Array(18).fill(-1);
  const mincode = new Int32Array(17);
  const valptr = new Int32Array(17);
  let code = 0;
  let k = 0;
  for (let len = 1; len <= 16; len++) {
    const count = counts[len - 1] ?? 0;
    mincode[len] = code;
    valptr[len] = k;
    for (let i = 0; i < count; i++) {
      if (len <= LOOKAHEAD) {
        const shift = LOOKAHEAD - len;
        const first = code << shift;
        const entry = (len << 8) | (symbols[k] ?? 0);
        for (let j = 0; j < 1 << shift; j++) fast[first + j] = entry;
      }
      code++;
      k++;
    }
    if (code > 1 << len) throw new CorruptImageError("a Huffman table has more codes than its lengths allow");
    maxcode[len] = count > 0 ? code - 1 : -1;
    code <<= 1;
  }
  maxcode[17] = 0x7fffffff;
  const fastAc = new Int32Array(1 << LOOKAHEAD);
  for (let i = 0; i < 1 << LOOKAHEAD; i++) {
    const entry = fast[i]!;
    if (entry < 0) continue;
    const len = entry >> 8;
    const rs = entry & 0xff;
    const run = rs >> 4;
    const size = rs & 15;
    if (size === 0 || len + size > LOOKAHEAD) continue;
    const raw = ((i << len) & ((1 << LOOKAHEAD) - 1)) >> (LOOKAHEAD - size);
    const value = raw < 1 << (size - 1) ? raw - (1 << size) + 1 : raw;
    fastAc[i] = (value << 10) | (run << 5) | (len + size);
  }
  return { fast, fastAc, maxcode, mincode, valptr, symbols };
}

export class BitReader {
  private buffer = 0;
  private bits = 0;
  /** Zero bytes appended after the segment's end (a marker or the end of the file). */
  private synthetic = 0;
  /** The marker that ended the segment (0 while none was met). */
  marker = 0;

  constructor(
    private readonly data: Uint8Array,
    /** Offset of the next unread byte. */
    public pos: number,
  ) {}

  private fill(): void {
    const data = this.data;
    while (this.bits <= 24) {
      let byte = 0;
      if (this.marker === 0 && this.pos < data.length) {
        byte = data[this.pos++]!;
        if (byte === 0xff) {
          let next = data[this.pos] ?? 0;
          while (next === 0xff) next = data[++this.pos] ?? 0;
          if (next === 0) {
            this.pos++;
          } else {
            // A marker: leave it for the caller (pos stays on the 0xFF before it) and feed zeros.
            this.marker = next;
            this.pos--;
            byte = 0;
            this.synthetic += 8;
          }
        }
      } else {
        this.synthetic += 8;
        if (this.synthetic > MAX_SYNTHETIC_BITS)
          throw new CorruptImageError("the image data ends long before its last block (truncated or corrupt)");
      }
      this.buffer |= byte << (24 - this.bits);
      this.bits += 8;
    }
  }

  /** Whether decoding consumed bits that the segment did not contain (truncated or corrupt data). */
  get overran(): boolean {
    return this.synthetic > this.bits;
  }

  decode(table: HuffmanTable): number {
    if (this.bits < 16) this.fill();
    const entry = table.fast[this.buffer >>> (32 - LOOKAHEAD)]!;
    if (entry >= 0) {
      const len = entry >> 8;
      this.buffer <<= len;
      this.bits -= len;
      return entry & 0xff;
    }
    for (let len = LOOKAHEAD + 1; len <= 16; len++) {
      const code = this.buffer >>> (32 - len);
      if (code <= table.maxcode[len]!) {
        this.buffer <<= len;
        this.bits -= len;
        const symbol = table.symbols[table.valptr[len]! + code - table.mincode[len]!];
        if (symbol === undefined) break;
        return symbol;
      }
    }
    throw new CorruptImageError("an entropy-coded segment holds a code its Huffman table does not define");
  }

  /** The fast AC entry for the next 9 bits (0 when the slow path must decode them), not consumed. */
  peekFastAc(table: HuffmanTable): number {
    if (this.bits < 16) this.fill();
    return table.fastAc[this.buffer >>> (32 - LOOKAHEAD)]!;
  }

  skip(n: number): void {
    this.buffer <<= n;
    this.bits -= n;
  }

  /** Reads `n` (1..16) bits as an unsigned number. */
  bitsOf(n: number): number {
    if (this.bits < n) this.fill();
    const value = this.buffer >>> (32 - n);
    this.buffer <<= n;
    this.bits -= n;
    return value;
  }

  bit(): number {
    if (this.bits < 1) this.fill();
    const value = this.buffer >>> 31;
    this.buffer <<= 1;
    this.bits -= 1;
    return value;
  }

  /** Reads `n` bits as a signed coefficient (JPEG's EXTEND). */
  receiveExtend(n: number): number {
    if (n === 0) return 0;
    const value = this.bitsOf(n);
    return value < 1 << (n - 1) ? value - (1 << n) + 1 : value;
  }

  /**
   * At a restart interval's end: drops the padding bits, checks that the expected RST marker comes
   * next and moves past it.
   */
  restart(expected: number): void {
    if (this.overran) throw new CorruptImageError("an entropy-coded segment ended before its restart interval");
    this.buffer = 0;
    this.bits = 0;
    this.synthetic = 0;
    if (this.marker === 0) {
      // The reader stopped short of the marker: skip the rest of the segment's bytes up to it.
      const data = this.data;
      while (this.pos + 1 < data.length && !(data[this.pos] === 0xff && data[this.pos + 1] !== 0 && data[this.pos + 1] !== 0xff))
        this.pos++;
      this.marker = data[this.pos + 1] ?? 0;
    }
    if (this.marker !== expected)
      throw new CorruptImageError(`expected restart marker RST${expected - 0xd0}, found ${this.marker.toString(16)}`);
    this.pos += 2;
    this.marker = 0;
  }

  /** After a scan: checks the data sufficed and returns the offset of the marker that follows it. */
  finish(): number {
    if (this.overran) throw new CorruptImageError("the image data ended before the last block (truncated or corrupt)");
    if (this.marker === 0) {
      const data = this.data;
      while (this.pos + 1 < data.length && !(data[this.pos] === 0xff && data[this.pos + 1] !== 0 && data[this.pos + 1] !== 0xff))
        this.pos++;
      if (this.pos + 1 >= data.length) throw new CorruptImageError("the image data ends without a marker after its last scan");
    }
    return this.pos;
  }
}
