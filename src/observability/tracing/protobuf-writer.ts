// The little of the protocol buffers wire format an OTLP export request needs: varints, fixed64, doubles,
// length-delimited strings, bytes and nested messages (protobuf.dev, "Encoding"), written into one growing buffer that
// a writer keeps from one export request to the next.

const VARINT = 0;
const FIXED64 = 1;
const LENGTH_DELIMITED = 2;

const utf8 = new TextEncoder();

/**
 * `String.prototype.charCodeAt` called as a function. A span's strings come in several of V8's string shapes (a
 * literal, a slice of the request target, a concatenation, a lower-cased copy); past four of them a `text.charCodeAt`
 * or `text.length` in a loop turns megamorphic, and every character then costs a lookup in V8's stub cache (a
 * quarter of a traced hit's instructions under callgrind). A call of the one function reads every shape the same way.
 */
const charCodeAt = Function.prototype.call.bind(String.prototype.charCodeAt) as (text: string, index: number) => number;

/** A hex digit's value by its character code: ids are lowercase hex (trace-context.ts and trace-ids.ts see to it). */
const NIBBLE = Uint8Array.from({ length: 0x67 }, (_, code) => (code <= 0x39 ? code - 0x30 : code - 0x57));

const varintSize = (value: number) => {
  let size = 1;
  for (let rest = value; rest >= 0x80; rest = Math.floor(rest / 0x80)) size++;
  return size;
};

/**
 * Writes a message's fields in order. A nested message is opened with {@link begin} and closed with {@link end},
 * which writes its length in the byte kept for it: no writer, array or closure per message.
 */
export class ProtobufWriter {
  private buffer = new Uint8Array(1024);
  /** The buffer's view for fixed-width numbers, made again only when the buffer grows. */
  private view = new DataView(this.buffer.buffer);
  private position = 0;

  private room(bytes: number): void {
    if (this.position + bytes <= this.buffer.length) return;
    const grown = new Uint8Array(Math.max(this.buffer.length * 2, this.position + bytes));
    grown.set(this.buffer.subarray(0, this.position));
    this.buffer = grown;
    this.view = new DataView(grown.buffer);
  }

  private byte(value: number): void {
    this.buffer[this.position++] = value;
  }

  /** A non-negative whole number below 2^53 (lengths, tags, enums, most int64 values). */
  private varint(value: number): void {
    this.room(10);
    let rest = value;
    while (rest >= 0x80) {
      this.byte((rest % 0x80) | 0x80);
      rest = Math.floor(rest / 0x80);
    }
    this.byte(rest);
  }

  private tag(field: number, wireType: number): void {
    this.varint((field << 3) | wireType);
  }

  /** An `int64`, `uint32`, `bool` or enum field; a negative int64 takes ten bytes, as two's complement. */
  int(field: number, value: number | boolean): void {
    this.tag(field, VARINT);
    const n = Number(value);
    if (n >= 0 && n <= Number.MAX_SAFE_INTEGER) return this.varint(n);
    this.room(10);
    let rest = BigInt.asUintN(64, BigInt(n));
    while (rest >= 0x80n) {
      this.byte(Number(rest & 0x7fn) | 0x80);
      rest >>= 7n;
    }
    this.byte(Number(rest));
  }

  /** A `fixed64` of `value` × 1000, `value` a whole number below 2^53 (microseconds as nanoseconds): no BigInt made. */
  fixed64Thousandfold(field: number, value: number): void {
    this.tag(field, FIXED64);
    this.room(8);
    const high = Math.floor(value / 2 ** 32);
    const low = (value - high * 2 ** 32) * 1000;
    const carry = Math.floor(low / 2 ** 32);
    this.view.setUint32(this.position, low - carry * 2 ** 32, true);
    this.view.setUint32(this.position + 4, high * 1000 + carry, true);
    this.position += 8;
  }

  double(field: number, value: number): void {
    this.tag(field, FIXED64);
    this.room(8);
    this.view.setFloat64(this.position, value, true);
    this.position += 8;
  }

  string(field: number, value: string): void {
    this.tag(field, LENGTH_DELIMITED);
    // ASCII (nearly every name and attribute) is its own UTF-8: written directly, unless a character says otherwise.
    const start = this.position;
    const length = value.length;
    this.varint(length);
    this.room(length);
    let i = 0;
    for (let code: number; i < length && (code = charCodeAt(value, i)) < 0x80; i++) this.byte(code);
    if (i === length) return;
    this.position = start;
    const encoded = utf8.encode(value);
    this.varint(encoded.length);
    this.room(encoded.length);
    this.buffer.set(encoded, this.position);
    this.position += encoded.length;
  }

  /** A `bytes` field given as hex digits (trace and span ids). */
  hexBytes(field: number, hex: string): void {
    this.tag(field, LENGTH_DELIMITED);
    const length = hex.length;
    this.varint(length / 2);
    this.room(length / 2);
    for (let i = 0; i < length; i += 2) this.byte((NIBBLE[charCodeAt(hex, i)]! << 4) | NIBBLE[charCodeAt(hex, i + 1)]!);
  }

  /**
   * Opens a nested message at `field`; its fields follow, then {@link end} with what this returned. One byte is kept
   * for its length, which is all a message under 128 bytes needs (every attribute): those are closed where they are.
   */
  begin(field: number): number {
    this.tag(field, LENGTH_DELIMITED);
    this.room(1);
    return ++this.position;
  }

  /** Closes the nested message opened at `start`: its length goes before its content. */
  end(start: number): void {
    const length = this.position - start;
    if (length < 0x80) {
      this.buffer[start - 1] = length;
      return;
    }
    // A longer one slides its content over by the bytes its length needs past the one kept.
    const extra = varintSize(length) - 1;
    this.room(extra);
    this.buffer.copyWithin(start + extra, start, this.position);
    const end = this.position + extra;
    this.position = start - 1;
    this.varint(length);
    this.position = end;
  }

  /** Writes `bytes` as they are: a field written before, kept (see {@link copyOut}). */
  raw(bytes: Uint8Array): void {
    this.room(bytes.length);
    this.buffer.set(bytes, this.position);
    this.position += bytes.length;
  }

  /** A copy of the bytes written since `start`. */
  copyOut(start: number): Uint8Array {
    return this.buffer.slice(start, this.position);
  }

  /** Bytes written so far. */
  get length(): number {
    return this.position;
  }

  /** Writes the first `bytes` bytes `other` holds, as they are (messages it wrote, each behind its tag). */
  copyFrom(other: ProtobufWriter, bytes: number): void {
    this.room(bytes);
    this.buffer.set(other.buffer.subarray(0, bytes), this.position);
    this.position += bytes;
  }

  /** Forgets the first `bytes` bytes: what follows them moves to the front. The buffer is kept for what comes next. */
  dropFirst(bytes: number): void {
    this.buffer.copyWithin(0, bytes, this.position);
    this.position -= bytes;
  }

  /**
   * What is written, as a view of the writer's buffer, which the writer then starts again in: the view holds until
   * the next write. (An export request's body: the queue writes the next one only after the batcher's send of this
   * one, its tries included, is done, so the HTTP client sends the view as it is and no 200 KB copy is made per batch.)
   */
  finish(): Uint8Array<ArrayBuffer> {
    const written = this.buffer.subarray(0, this.position);
    this.position = 0;
    return written;
  }
}
