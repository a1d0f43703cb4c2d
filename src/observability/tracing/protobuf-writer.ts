// The little of the protocol buffers wire format an OTLP export request needs: varints, fixed64, doubles,
// length-delimited strings, bytes and nested messages (protobuf.dev, "Encoding").

const VARINT = 0;
const FIXED64 = 1;
const LENGTH_DELIMITED = 2;

const utf8 = new TextEncoder();

/** Writes one message's fields in order; a nested message is written into a writer of its own first. */
export class ProtobufWriter {
  private readonly bytes: number[] = [];

  private tag(field: number, wireType: number): void {
    this.varint(BigInt((field << 3) | wireType));
  }

  private varint(value: bigint): void {
    let rest = BigInt.asUintN(64, value);
    while (rest >= 0x80n) {
      this.bytes.push(Number(rest & 0x7fn) | 0x80);
      rest >>= 7n;
    }
    this.bytes.push(Number(rest));
  }

  private delimited(field: number, content: ArrayLike<number>): void {
    this.tag(field, LENGTH_DELIMITED);
    this.varint(BigInt(content.length));
    for (let i = 0; i < content.length; i++) this.bytes.push(content[i]!);
  }

  /** An `int64`, `uint32`, `bool` or enum field (zero included: the caller leaves out defaults it need not send). */
  int(field: number, value: bigint | number | boolean): void {
    this.tag(field, VARINT);
    this.varint(BigInt(value));
  }

  fixed64(field: number, value: bigint): void {
    this.tag(field, FIXED64);
    const view = new DataView(new ArrayBuffer(8));
    view.setBigUint64(0, BigInt.asUintN(64, value), true);
    this.bytes.push(...new Uint8Array(view.buffer));
  }

  double(field: number, value: number): void {
    this.tag(field, FIXED64);
    const view = new DataView(new ArrayBuffer(8));
    view.setFloat64(0, value, true);
    this.bytes.push(...new Uint8Array(view.buffer));
  }

  string(field: number, value: string): void {
    this.delimited(field, utf8.encode(value));
  }

  /** A `bytes` field given as hex digits (trace and span ids). */
  hexBytes(field: number, hex: string): void {
    const content: number[] = [];
    for (let i = 0; i < hex.length; i += 2) content.push(parseInt(hex.slice(i, i + 2), 16));
    this.delimited(field, content);
  }

  message(field: number, write: (writer: ProtobufWriter) => void): void {
    const inner = new ProtobufWriter();
    write(inner);
    this.delimited(field, inner.bytes);
  }

  finish(): Uint8Array<ArrayBuffer> {
    return Uint8Array.from(this.bytes);
  }
}
