import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createKeyedHasher } from './keyed-hash.js';

describe('createKeyedHasher', () => {
  it('is HMAC-SHA-256 of the E.164 number under LOG_HASH_KEY, its first 128 bits in hex', async () => {
    const hasher = createKeyedHasher({ key: 'log-hash-key' });
    const expected = createHmac('sha256', 'log-hash-key').update('+442079460001').digest('hex').slice(0, 32);
    expect(await hasher.hash('+442079460001')).toBe(expected);
  });

  it('gives one number one hash within a key, and unrelated hashes under another key', async () => {
    const a = createKeyedHasher({ key: 'key-a' });
    const b = createKeyedHasher({ key: 'key-b' });
    expect(await a.hash('+442079460001')).toBe(await createKeyedHasher({ key: 'key-a' }).hash('+442079460001'));
    expect(await a.hash('+442079460001')).not.toBe(await b.hash('+442079460001'));
    expect(await a.hash('+442079460001')).not.toBe(await a.hash('+442079460002'));
  });

  it('uses a random key per process when none is configured', async () => {
    const one = await createKeyedHasher().hash('+442079460001');
    const two = await createKeyedHasher().hash('+442079460001');
    expect(one).toMatch(/^[0-9a-f]{32}$/);
    expect(one).not.toBe(two);
  });

  it('memoises recent hashes for synchronous use, and forgets the least recently used beyond its size', async () => {
    const hasher = createKeyedHasher({ key: 'k', memoSize: 2 });
    expect(hasher.cached('+442079460001')).toBeUndefined();
    const first = await hasher.hash('+442079460001');
    expect(hasher.cached('+442079460001')).toBe(first);
    await hasher.hash('+442079460002');
    hasher.cached('+442079460001');
    await hasher.hash('+442079460003');
    expect(hasher.cached('+442079460002')).toBeUndefined();
    expect(hasher.cached('+442079460001')).toBe(first);
  });
});

describe('createKeyedHasher with a synchronous HMAC (Node)', () => {
  const syncHmac = (key: Uint8Array, data: string) => createHmac('sha256', key).update(data).digest('hex');

  it('answers synchronously with the same hash as Web Crypto under the same key', async () => {
    const sync = createKeyedHasher({ key: 'log-hash-key', syncHmac });
    const web = createKeyedHasher({ key: 'log-hash-key' });
    expect(sync.cached('+442079460001')).toBe(await web.hash('+442079460001'));
    expect(await sync.hash('+442079460002')).toBe(await web.hash('+442079460002'));
  });
});
