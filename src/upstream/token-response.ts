// Parses the upstream token endpoint's non-standard JSON (expires_in as a string, scope as objects).

export interface ParsedTokenResponse {
  accessToken: string;
  lifetimeMs: number;
}

export type ExpiresInUnit = 'seconds' | 'milliseconds';

// Visible ASCII only: anything else could not travel in an Authorization header and would fail
// every search later, far from its cause.
const HEADER_SAFE = /^[\x21-\x7e]+$/;
const DECIMAL = /^\d+(?:\.\d+)?$/;

/**
 * Throws a plain Error on a malformed body. Messages are fixed strings on purpose: they end up in
 * logs and must never carry the token or any part of the body (V8's SyntaxError quotes the input).
 */
export function parseTokenResponse(body: string, unit: ExpiresInUnit): ParsedTokenResponse {
  let data: unknown;
  try {
    data = JSON.parse(body);
  } catch {
    throw new Error('token response is not JSON');
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new Error('token response is not a JSON object');
  }
  const record = data as Record<string, unknown>;

  const accessToken = record['access_token'];
  if (typeof accessToken !== 'string' || accessToken.length === 0) {
    throw new Error('token response has no access_token');
  }
  if (!HEADER_SAFE.test(accessToken)) {
    throw new Error('token response access_token has characters not allowed in a header');
  }

  if ('token_type' in record) {
    const tokenType = record['token_type'];
    if (typeof tokenType !== 'string' || tokenType.toLowerCase() !== 'bearer') {
      throw new Error('token response token_type is not bearer');
    }
  }

  const lifetime = readExpiresIn(record['expires_in']);
  const lifetimeMs = unit === 'seconds' ? lifetime * 1000 : lifetime;
  if (!Number.isFinite(lifetimeMs)) {
    throw new Error('token response expires_in is out of range');
  }
  return { accessToken, lifetimeMs };
}

function readExpiresIn(value: unknown): number {
  let n: number;
  if (typeof value === 'number') {
    n = value;
  } else if (typeof value === 'string' && DECIMAL.test(value.trim())) {
    n = Number(value.trim());
  } else {
    throw new Error('token response expires_in is missing or not a number');
  }
  // Zero is refused too: a token that is born expired would make every caller refresh again.
  if (!Number.isFinite(n) || n <= 0) {
    throw new Error('token response expires_in is not a positive finite number');
  }
  return n;
}
