/**
 * The string table both GIF's and TIFF's LZW build (their codes are read differently: GIF's LSB
 * first, TIFF's MSB first and widened one code early): up to 4096 strings, each a previous string
 * plus one byte, written out in pieces of at most 64 KiB to a sink.
 */
export class LzwStrings {
  private readonly prefix = new Int16Array(4096);
  private readonly suffix = new Uint8Array(4096);
  private readonly first = new Uint8Array(4096);
  private readonly lengths = new Uint16Array(4096);
  private readonly out = new Uint8Array(65536);
  private used = 0;
  /** Bytes written so far. */
  written = 0;
  /** The next free code. */
  next: number;

  constructor(
    /** Codes below this are single bytes (256, or a GIF's 1 << minimum code size). */
    private readonly roots: number,
    /** The first code a string is added at (after the clear and end codes). */
    private readonly firstFree: number,
    private readonly sink: (piece: Uint8Array) => void,
  ) {
    for (let i = 0; i < roots; i++) {
      this.prefix[i] = -1;
      this.suffix[i] = i;
      this.first[i] = i;
      this.lengths[i] = 1;
    }
    this.next = firstFree;
  }

  clear(): void {
    this.next = this.firstFree;
  }

  isRoot(code: number): boolean {
    return code < this.roots;
  }

  /** Adds `previous` plus the first byte of `code` (of `previous` itself when `code` is the one being added). */
  add(previous: number, code: number): void {
    const n = this.next++;
    this.prefix[n] = previous;
    this.suffix[n] = code < n ? this.first[code]! : this.first[previous]!;
    this.first[n] = this.first[previous]!;
    this.lengths[n] = this.lengths[previous]! + 1;
  }

  /** Writes the string of `code`. */
  emit(code: number): void {
    const length = this.lengths[code]!;
    if (this.used + length > this.out.length) this.flush();
    for (let c = code, at = this.used + length - 1; c >= 0; c = this.prefix[c]!, at--) this.out[at] = this.suffix[c]!;
    this.used += length;
    this.written += length;
  }

  flush(): void {
    if (this.used > 0) this.sink(this.out.subarray(0, this.used));
    this.used = 0;
  }
}
