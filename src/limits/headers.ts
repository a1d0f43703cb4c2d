// The RateLimit header fields of an answer a limit applies to, as draft-ietf-httpapi-ratelimit-headers-11 defines
// them: `RateLimit-Policy` lists the named policies (`"console-address";q=10;w=60`), `RateLimit` names the one
// nearest to refusal (`"console-address";r=7;t=42`). Serialised as Structured Field Values (RFC 9651) by the
// `structured-headers` package. RATELIMIT_HEADERS=draft-6 (or `both`) keeps the older trio
// (`RateLimit-Limit`, `-Remaining`, `-Reset` and `RateLimit-Policy: 10;w=60`) for clients that read it.
import { serializeList, serializeString } from 'structured-headers';

export type RateLimitHeaderFormat = 'draft-11' | 'draft-6' | 'both';

export interface RateLimitPolicy {
  /** The policy's name in the fields, e.g. `console-address`. */
  name: string;
  /** Requests allowed in one window. */
  quota: number;
  windowSeconds: number;
}

/** Where a caller stands against one policy. */
export interface RateLimitState {
  /** The policy's name. */
  policy: string;
  limit: number;
  remaining: number;
  /** Seconds until the policy's window starts afresh. */
  resetSeconds: number;
}

export interface RateLimitFields {
  readonly policies: readonly RateLimitPolicy[];
  /** The header fields for the state of the policy nearest to refusal. */
  headers(state: RateLimitState): Record<string, string>;
  /** The state of the policy nearest to refusal of several (fewest remaining; of equals, the later reset). */
  nearest(...states: RateLimitState[]): RateLimitState;
}

export function createRateLimitFields(policies: RateLimitPolicy[], format: RateLimitHeaderFormat): RateLimitFields {
  // The policy list does not change: serialised once.
  const policyField = serializeList(
    policies.map((p) => [
      p.name,
      new Map([
        ['q', p.quota],
        ['w', p.windowSeconds],
      ]),
    ]),
  );
  const draft6Policy = policies.map((p) => `${p.quota};w=${p.windowSeconds}`).join(', ');
  // Each policy's name serialised once; per answer only its two integer parameters follow, which RFC 9651 writes
  // as their decimal digits (the hit path pays a string concatenation, not a serialiser's pass).
  const names = new Map(policies.map((p) => [p.name, serializeString(p.name)]));
  const draft11 = format !== 'draft-6';
  const draft6 = format !== 'draft-11';

  return {
    policies,
    headers(state) {
      const headers: Record<string, string> = {};
      if (draft11) {
        headers['ratelimit-policy'] = policyField;
        const name = names.get(state.policy) ?? serializeString(state.policy);
        headers['ratelimit'] = `${name};r=${Math.trunc(state.remaining)};t=${Math.trunc(state.resetSeconds)}`;
      }
      if (draft6) {
        headers['ratelimit-limit'] = String(state.limit);
        headers['ratelimit-remaining'] = String(state.remaining);
        headers['ratelimit-reset'] = String(state.resetSeconds);
        // In `both`, the draft-11 policy list is the field's value: one field cannot hold both syntaxes.
        if (!draft11) headers['ratelimit-policy'] = draft6Policy;
      }
      return headers;
    },
    nearest(...states) {
      let best = states[0]!;
      for (const s of states.slice(1)) {
        if (s.remaining < best.remaining || (s.remaining === best.remaining && s.resetSeconds > best.resetSeconds))
          best = s;
      }
      return best;
    },
  };
}
