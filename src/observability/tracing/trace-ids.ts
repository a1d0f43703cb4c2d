// Random trace and span ids (W3C Trace Context section 3.2.2.3), cut from a pool of random bytes that is filled when
// first needed: workerd refuses randomness at a module's top level, and one getRandomValues call costs as much as
// dozens of ids cut from the pool. The pool is written out as hex digits a chunk at a time, and an id is a slice of
// its chunk's string: no string is built per id.

const POOL_BYTES = 16_384;
/**
 * The bytes written out as one string of hex digits: a slice keeps its whole string alive, so an id kept long (a
 * histogram bucket's exemplar) holds 512 characters, not the pool's 32,768.
 */
const CHUNK_BYTES = 256;
/** The ASCII codes of the 16 hex digits, lower case. */
const DIGITS = new TextEncoder().encode('0123456789abcdef');
/** The invalid all-zero ids, by length in hex digits. */
const ZEROS: Record<number, string> = { 16: '0'.repeat(16), 32: '0'.repeat(32) };

/** One tracer's source of ids. */
export class RandomIds {
  private readonly bytes = new Uint8Array(POOL_BYTES);
  /** Bytes of the pool already written out. */
  private used = POOL_BYTES;
  private readonly ascii = new Uint8Array(CHUNK_BYTES * 2);
  private readonly decoder = new TextDecoder();
  private chunk = '';
  private next = 0;

  private nextChunk(): void {
    if (this.used === POOL_BYTES) {
      crypto.getRandomValues(this.bytes);
      this.used = 0;
    }
    for (let i = 0; i < CHUNK_BYTES; i++) {
      const byte = this.bytes[this.used + i]!;
      this.ascii[2 * i] = DIGITS[byte >> 4]!;
      this.ascii[2 * i + 1] = DIGITS[byte & 15]!;
    }
    this.used += CHUNK_BYTES;
    this.chunk = this.decoder.decode(this.ascii);
    this.next = 0;
  }

  private hex(digits: number): string {
    if (this.next + digits > this.chunk.length) this.nextChunk();
    const hex = this.chunk.slice(this.next, this.next + digits);
    this.next += digits;
    // An all-zero id is invalid; one in 2^64 draws, so drawing again costs nothing in practice.
    return hex === ZEROS[digits] ? this.hex(digits) : hex;
  }

  /** 32 lowercase hex digits, not all zero. */
  traceId(): string {
    return this.hex(32);
  }

  /** 16 lowercase hex digits, not all zero. */
  spanId(): string {
    return this.hex(16);
  }
}
