// Sealing the upstream token before it goes to Redis: AES-256-GCM under a key derived (HKDF-SHA-256) from
// GATEWAY_TOKEN_SECRET, which every replica already shares, so whoever can read Redis cannot read the token.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/** Fixed, so every replica derives the same key; versioned, so a later scheme can derive another. */
const KEY_INFO = 'callerid-gateway upstream-token seal v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface TokenSeal {
  /** base64 of iv | tag | ciphertext; `context` is bound to it (the Redis key), so a value cannot be moved. */
  seal(plain: string, context: string): string;
  /** The plain text, or null when the value was not sealed by this key for this context (or was altered). */
  open(sealed: string, context: string): string | null;
}

/** `keyInfo` separates keys by use (the lookup tier's values are sealed under a key of their own). */
export function createTokenSeal(secret: string, keyInfo = KEY_INFO): TokenSeal {
  const key = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), keyInfo, 32));
  return {
    seal(plain, context) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(context));
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
    },
    open(sealed, context) {
      const raw = Buffer.from(sealed, 'base64');
      if (raw.length <= IV_BYTES + TAG_BYTES) return null;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
        decipher.setAAD(Buffer.from(context));
        decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
        return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
      } catch {
        // Another secret (a rotation in progress) or a tampered value: as if nothing were published.
        return null;
      }
    },
  };
}
