// The internal clients allowed to obtain gateway tokens, stored as SHA-256 digests of their secrets.

export interface ClientRegistry {
  /** True when `secret` is the registered secret of `clientId`; takes the same time for unknown ids. */
  authenticate(clientId: string, secret: string): Promise<boolean>;
  has(clientId: string): boolean;
  /** Changes whenever the secrets the registry accepts change, so what was found right before is checked again. */
  generation(): number;
}

const encoder = new TextEncoder();

export async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(text)));
  let hex = '';
  for (const byte of digest) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/** Compares two equal-length strings without an early exit, so timing says nothing of where they differ. */
export function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

const UNKNOWN_CLIENT_DIGEST = '0'.repeat(64);

export function createClientRegistry(clients: ReadonlyMap<string, string>): ClientRegistry {
  return {
    async authenticate(clientId, secret) {
      const expected = clients.get(clientId);
      const actual = await sha256Hex(secret);
      const match = constantTimeEqual(actual, expected ?? UNKNOWN_CLIENT_DIGEST);
      return match && expected !== undefined;
    },
    // The map's own method: checked on every hit, where a wrapper would be one more call.
    has: clients.has.bind(clients),
    // A fixed set of clients: what was right stays right.
    generation: () => 0,
  };
}
