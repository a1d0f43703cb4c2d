// The hit path's encoded bodies: the UTF-8 bytes Node would write for the string, made once per body, bounded.
import { describe, expect, it } from 'vitest';
import { createEncodedBodies } from './search-door.js';

const utf8 = (s: string) => Buffer.from(s, 'utf8');

describe('encoded bodies', () => {
  it('are the bytes Node writes for the string: ASCII, Latin-1, other planes, a lone surrogate', () => {
    const encoded = createEncodedBodies();
    for (const body of ['{"a":1}', '{"name":"Café Zoë"}', '{"name":"Łódź 🎉"}', '{"bad":"\ud800x"}', '']) {
      const bytes = encoded.of(body, Buffer.byteLength(body));
      expect(typeof bytes).not.toBe('string');
      expect(Buffer.from(bytes as Uint8Array).equals(utf8(body)), JSON.stringify(body)).toBe(true);
    }
  });

  it('are made once per body and kept by it', () => {
    const encoded = createEncodedBodies();
    const body = '{"name":"Café Zoë"}';
    const first = encoded.of(body, Buffer.byteLength(body));
    expect(encoded.of(`${'{"name":"Café'} Zoë"}`, Buffer.byteLength(body))).toBe(first);
    expect(encoded.of('{"name":"Other"}', 16)).not.toBe(first);
  });

  it('are not kept for a body over the bound: the string is written as it is', () => {
    const encoded = createEncodedBodies(1024 * 1024, 1000);
    const big = `"${'x'.repeat(1000)}"`;
    expect(encoded.of(big, Buffer.byteLength(big))).toBe(big);
    expect(encoded.size).toBe(0);
  });

  it('hold at most their bound in all, body strings counted', () => {
    const encoded = createEncodedBodies(64 * 1024, 4096);
    const bodies = Array.from({ length: 200 }, (_, i) => `{"n":${i},"pad":"${'é'.repeat(500)}"}`);
    for (const body of bodies) {
      encoded.of(body, Buffer.byteLength(body));
      expect(encoded.size).toBeLessThanOrEqual(64 * 1024);
    }
    // The most recent are kept: asking again gives the same bytes without encoding anew.
    const last = bodies.at(-1)!;
    expect(encoded.of(last, Buffer.byteLength(last))).toBe(encoded.of(last, Buffer.byteLength(last)));
    expect(encoded.size).toBeGreaterThan(32 * 1024);
  });
});
