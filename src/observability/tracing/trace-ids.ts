// Random trace and span ids (W3C Trace Context section 3.2.2.3), cut from a pool of random bytes that is filled when
// first needed: workerd refuses randomness at a module's top level, and one getRandomValues call costs as much as
// dozens of ids cut from the pool.

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
const POOL_BYTES = 4096;
/** The invalid all-zero ids, by length in bytes. */
const ZEROS: Record<number, string> = { 8: '0'.repeat(16), 16: '0'.repeat(32) };

/** One tracer's source of ids. */
export class RandomIds {
  private readonly pool = new Uint8Array(POOL_BYTES);
  private next = POOL_BYTES;

  private hex(bytes: number): string {
    if (this.next + bytes > POOL_BYTES) {
      crypto.getRandomValues(this.pool);
      this.next = 0;
    }
    let hex = '';
    for (let i = this.next; i < this.next + bytes; i++) hex += HEX[this.pool[i]!];
    this.next += bytes;
    // An all-zero id is invalid; one in 2^64 draws, so drawing again costs nothing in practice.
    return hex === ZEROS[bytes] ? this.hex(bytes) : hex;
  }

  /** 32 lowercase hex digits, not all zero. */
  traceId(): string {
    return this.hex(16);
  }

  /** 16 lowercase hex digits, not all zero. */
  spanId(): string {
    return this.hex(8);
  }
}
