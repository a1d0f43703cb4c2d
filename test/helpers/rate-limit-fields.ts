// Reads an answer's RateLimit fields (draft-ietf-httpapi-ratelimit-headers-11) with a structured-field parser:
// the policy nearest to refusal from `RateLimit`, its quota and window from `RateLimit-Policy`.
import { parseItem, parseList } from 'structured-headers';

export interface RateLimitReading {
  policy: string;
  quota: number;
  window: number;
  remaining: number;
  reset: number;
  /** Every policy listed, by name. */
  policies: Record<string, { q: number; w: number }>;
}

/** The fields of `res`, or null when it has none; throws when they do not parse as structured fields. */
export function rateLimitOf(res: { headers: { get(name: string): string | null } }): RateLimitReading | null {
  const current = res.headers.get('ratelimit');
  const listed = res.headers.get('ratelimit-policy');
  if (current === null || listed === null) return null;
  const policies: RateLimitReading['policies'] = {};
  for (const [name, params] of parseList(listed)) {
    policies[String(name)] = { q: Number(params.get('q')), w: Number(params.get('w')) };
  }
  const [name, params] = parseItem(current);
  const policy = policies[String(name)];
  if (policy === undefined) throw new Error(`RateLimit names ${String(name)}, which RateLimit-Policy does not list`);
  return {
    policy: String(name),
    quota: policy.q,
    window: policy.w,
    remaining: Number(params.get('r')),
    reset: Number(params.get('t')),
    policies,
  };
}
