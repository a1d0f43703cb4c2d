// Random trace and span ids (W3C Trace Context section 3.2.2.3), cut from a pool of random hex digits that is filled
// when first needed: workerd refuses randomness at a module's top level, and one getRandomValues call costs as much as
// dozens of ids cut from the pool. The pool is written out as one string of hex digits, so an id is a slice of it: no
// string is built per id.

const POOL_BYTES = 16_384;
/** The ASCII codes of the 16 hex digits, lower case. */
const DIGITS = new TextEncoder().encode('0123456789abcdef');
/** The invalid all-zero ids, by length in hex digits. */
const ZEROS: Record<number, string> = { 16: '0'.repeat(16), 32: '0'.repeat(32) };

/** One tracer's source of ids. */
export class RandomIds {
  private readonly bytes = new Uint8Array(POOL_BYTES);
  private readonly ascii = new Uint8Array(POOL_BYTES * 2);
  private readonly decoder = new TextDecoder();
  private pool = '';
  private next = 0;

  private fill(): void {
    crypto.getRandomValues(this.bytes);
    for (let i = 0; i < POOL_BYTES; i++) {
      const byte = this.bytes[i]!;
      this.ascii[2 * i] = DIGITS[byte >> 4]!;
      this.ascii[2 * i + 1] = DIGITS[byte & 15]!;
    }
    this.pool = this.decoder.decode(this.ascii);
    this.next = 0;
  }

  private hex(digits: number): string {
    if (this.next + digits > this.pool.length) this.fill();
    const hex = this.pool.slice(this.next, this.next + digits);
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
