// Revoked gateway tokens (RFC 7009): the set every replica holds in memory, so the hit path checks a token with two
// map lookups and no round trip, and the port through which a revocation reaches the other replicas (Redis
// publish plus a denylist on Node, a Durable Object on Workers; without a shared store, this process alone).
import type { Clock } from '../clock.js';

/** One revocation: a single token until it expires, or every token of a client issued before a time. */
export type Revocation =
  | {
      kind: 'token';
      jti: string;
      /** The token's expiry, milliseconds since the epoch: after it the entry is no longer needed. */
      until: number;
    }
  | {
      kind: 'client';
      clientId: string;
      /** Tokens issued before this instant (ms) are revoked. */
      before: number;
      /** When the last token issued before `before` expires at the latest (ms). */
      until: number;
    };

/** What a revocation is checked against: the claims of a verified token. */
interface RevocableToken {
  jti: string;
  clientId: string;
  /** `iat`, milliseconds since the epoch. */
  issuedAt: number;
}

/** The revocations this process knows of; entries leave once the tokens they name have expired. */
export class RevocationList {
  private readonly tokens = new Map<string, number>();
  private readonly clients = new Map<string, { before: number; until: number }>();

  /** Whether the token is revoked: its `jti` named, or issued before its client's cut-off. */
  isRevoked(token: RevocableToken): boolean {
    if (this.tokens.size > 0 && this.tokens.has(token.jti)) return true;
    if (this.clients.size === 0) return false;
    const cut = this.clients.get(token.clientId);
    return cut !== undefined && token.issuedAt < cut.before;
  }

  add(revocation: Revocation): void {
    if (revocation.kind === 'token') {
      this.tokens.set(revocation.jti, Math.max(revocation.until, this.tokens.get(revocation.jti) ?? 0));
      return;
    }
    const held = this.clients.get(revocation.clientId);
    this.clients.set(revocation.clientId, {
      before: Math.max(revocation.before, held?.before ?? 0),
      until: Math.max(revocation.until, held?.until ?? 0),
    });
  }

  /** Forgets what names only expired tokens. */
  prune(now: number): void {
    for (const [jti, until] of this.tokens) if (until <= now) this.tokens.delete(jti);
    for (const [id, cut] of this.clients) if (cut.until <= now) this.clients.delete(id);
  }

  get size(): number {
    return this.tokens.size + this.clients.size;
  }
}

/** How far a revocation reaches: `process` (no shared store), `deployment` (Redis or the Durable Object). */
type RevocationReach = 'process' | 'deployment';

/** The deployment's revocations: the list this process checks, fed by the shared store where there is one. */
export interface Revocations {
  readonly list: RevocationList;
  readonly reach: RevocationReach;
  /**
   * Revokes in this process at once, then for the deployment; false when the shared store did not take it (this
   * replica refuses the token, others may not yet: the caller says so and asks for a retry).
   */
  revoke(revocation: Revocation): Promise<boolean>;
}

/** A process without a shared store: a revocation holds here at once, and nowhere else. */
export function processRevocations(clock: Clock): Revocations {
  const list = new RevocationList();
  return {
    list,
    reach: 'process',
    revoke(revocation) {
      list.prune(clock());
      list.add(revocation);
      return Promise.resolve(true);
    },
  };
}
