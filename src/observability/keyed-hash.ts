// Keyed hashes (HMAC-SHA-256) of personal data: phone numbers in logs, client addresses in rate-limit keys.
// Equal inputs give equal hashes under one key, but the input cannot be recovered without the key.
import { LRUCache } from 'lru-cache';

export interface KeyedHasher {
  /** The keyed hash of an E.164 number: 32 lowercase hex characters (the first 128 bits of the HMAC). */
  hash(e164: string): Promise<string>;
  /** The hash when it can be had synchronously (memoised, or a synchronous HMAC), so a hot path can log without waiting. */
  cached(e164: string): string | undefined;
}

/** A synchronous HMAC-SHA-256 returning lowercase hex; Node's `createHmac` is far cheaper than Web Crypto's job. */
export type SyncHmac = (key: Uint8Array, data: string) => string;

export interface KeyedHasherOptions {
  /** `LOG_HASH_KEY`; when absent a random key per process, so hashes correlate only within one process. */
  key?: string | undefined;
  /** Memoised hashes kept (least recently used dropped first); default 1024. */
  memoSize?: number;
  /** Where the runtime has one (Node); otherwise Web Crypto. */
  syncHmac?: SyncHmac | undefined;
}

const encoder = new TextEncoder();
const HASH_HEX_CHARS = 32;

export function createKeyedHasher(options: KeyedHasherOptions = {}): KeyedHasher {
  const rawKey = options.key ? encoder.encode(options.key) : crypto.getRandomValues(new Uint8Array(32));
  const memo = new LRUCache<string, string>({ max: Math.max(1, options.memoSize ?? 1024) });
  const { syncHmac } = options;

  if (syncHmac) {
    const cached = (e164: string): string => {
      let digest = memo.get(e164);
      if (digest === undefined) {
        digest = syncHmac(rawKey, e164).slice(0, HASH_HEX_CHARS);
        memo.set(e164, digest);
      }
      return digest;
    };
    return { cached, hash: async (e164) => cached(e164) };
  }

  let keyPromise: Promise<CryptoKey> | undefined;
  const key = () =>
    (keyPromise ??= crypto.subtle.importKey('raw', rawKey, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']));
  return {
    cached: (e164) => memo.get(e164),
    async hash(e164) {
      const known = memo.get(e164);
      if (known !== undefined) return known;
      const mac = new Uint8Array(await crypto.subtle.sign('HMAC', await key(), encoder.encode(e164)));
      let hex = '';
      for (let i = 0; i < HASH_HEX_CHARS / 2; i++) hex += mac[i]!.toString(16).padStart(2, '0');
      memo.set(e164, hex);
      return hex;
    },
  };
}
