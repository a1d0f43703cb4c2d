// A Fetch API answer's body read within a byte bound (an upstream's search or token answer, a trace collector's
// reply): past the bound nothing more is read, nor unpacked where the runtime decodes a Content-Encoding.

/** True when a declared Content-Length already says the body is larger than `maxBytes`. */
export function declaredTooLarge(contentLength: string | null | undefined, maxBytes: number): boolean {
  return (
    contentLength !== null &&
    contentLength !== undefined &&
    /^\d+$/.test(contentLength) &&
    Number(contentLength) > maxBytes
  );
}

/**
 * The body's bytes, or null at the first chunk that takes it past `maxBytes`: leaving the loop cancels the stream,
 * so the rest is never read and the connection is closed.
 */
export async function readWithin(chunks: AsyncIterable<Uint8Array>, maxBytes: number): Promise<Uint8Array | null> {
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of chunks) {
    size += chunk.byteLength;
    if (size > maxBytes) return null;
    parts.push(chunk);
  }
  const all = new Uint8Array(size);
  let offset = 0;
  for (const part of parts) {
    all.set(part, offset);
    offset += part.byteLength;
  }
  return all;
}
