// Keyed hashes of phone numbers for logs (HMAC-SHA-256, Web Crypto): a line can be correlated with
// others for the same number, but the number cannot be recovered without the key.

export interface NumberHasher {
  /** The keyed hash of an E.164 number: 32 lowercase hex characters (the first 128 bits of the HMAC). */
  hash(e164: string): Promise<string>;
  /** The hash when it is already memoised, so a hot path can log without waiting. */
  cached(e164: string): string | undefined;
}

export interface NumberHasherOptions {
  /** `LOG_HASH_KEY`; when absent a random key per process, so hashes correlate only within one process. */
  key?: string | undefined;
  /** Memoised hashes kept (least recently used dropped first); default 1024. */
  memoSize?: number;
}

const encoder = new TextEncoder();

export function createNumberHasher(options: NumberHasherOptions = {}): NumberHasher {
  const memoSize = Math.max(1, options.memoSize ?? 1024);
  const rawKey = options.key ? encoder.encode(options.key) : crypto.getRandomValues(new Uint8Array(32));
  let keyPromise: Promise<CryptoKey> | undefined;
  const key = () => (keyPromise ??= crypto.subtle.importKey('raw', rawKey, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']));
  // A Map iterates in insertion order: re-inserting on use makes the first key the least recently used.
  const memo = new Map<string, string>();

  const remember = (e164: string, digest: string): void => {
    memo.set(e164, digest);
    if (memo.size > memoSize) memo.delete(memo.keys().next().value!);
  };

  const cached = (e164: string): string | undefined => {
    const digest = memo.get(e164);
    if (digest !== undefined) {
      memo.delete(e164);
      memo.set(e164, digest);
    }
    return digest;
  };

  return {
    cached,
    async hash(e164) {
      const known = cached(e164);
      if (known !== undefined) return known;
      const mac = new Uint8Array(await crypto.subtle.sign('HMAC', await key(), encoder.encode(e164)));
      let hex = '';
      for (let i = 0; i < 16; i++) hex += mac[i]!.toString(16).padStart(2, '0');
      remember(e164, hex);
      return hex;
    },
  };
}
