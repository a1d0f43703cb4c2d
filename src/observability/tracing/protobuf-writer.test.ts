// The writer's strings and ids: every shape a string takes in V8 (a literal, a slice, a concatenation, a lower-cased
// copy, one past its fast path's ASCII) written as its UTF-8 bytes behind its length, and hex ids as their bytes.
import { describe, expect, it } from 'vitest';
import { ProtobufWriter } from './protobuf-writer.js';

const target = '/v2/contacts/search?what=%2B442079460010';
const host = `CallerID.Example.COM:${8000 + target.length}`;

/** A string field 1 as the wire format has it: tag 0x0a, the UTF-8 length as a varint, the bytes. */
function expected(text: string): number[] {
  const bytes = [...new TextEncoder().encode(text)];
  const length: number[] = [];
  for (let rest = bytes.length; ; rest = Math.floor(rest / 0x80)) {
    if (rest < 0x80) {
      length.push(rest);
      break;
    }
    length.push((rest % 0x80) | 0x80);
  }
  return [0x0a, ...length, ...bytes];
}

describe('ProtobufWriter', () => {
  it.each([
    ['a literal', 'http.request.method'],
    ['a slice', target.split('?', 1)[0]!],
    ['a concatenation', `GET ${target.slice(0, 19)} ${host}`],
    ['a lower-cased copy', host.replace(/:\d+$/, '').toLowerCase()],
    ['ASCII, then not', `${'a'.repeat(20)}Zürich ✓`],
    ['past 127 bytes', `${'x'.repeat(200)}${target}`],
    ['empty', ''],
  ])('writes %s as its UTF-8 bytes behind their length', (_shape, text) => {
    // Every shape through the one writer, as a span's attributes go through it, before the one compared.
    const warm = new ProtobufWriter();
    for (const other of ['a', target.split('?', 1)[0]!, `${host}!`, host.toLowerCase(), 'ü']) warm.string(1, other);
    const w = new ProtobufWriter();
    w.string(1, text);
    expect([...w.finish()]).toEqual(expected(text));
  });

  it('writes hex ids as their bytes, from a slice of a traceparent as from a literal', () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const w = new ProtobufWriter();
    w.hexBytes(1, traceparent.slice(3, 35));
    w.hexBytes(2, '00f067aa0ba902b7');
    expect(Buffer.from(w.finish()).toString('hex')).toBe('0a104bf92f3577b34da6a3ce929d0e0e4736120800f067aa0ba902b7');
  });
});
