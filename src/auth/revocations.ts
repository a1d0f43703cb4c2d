// Revoked gateway tokens (RFC 7009): the set every replica holds in memory, so the hit path checks a token with two
// map lookups and no round trip, and the port through which a revocation reaches the other replicas (Redis
// publish plus a denylist on Node, a Durable Object on Workers; without a shared store, this process alone).
// The set is bounded by count as well as by time: a token revocation beyond a bound widens into its client's cut.
import type { Clock } from '../base/clock.js';

/** One revocation: a single token until it expires, or every token of a client issued up to a time. */
export type Revocation =
  | {
      kind: 'token';
      jti: string;
      /** The token's client and `iat` (ms): what the revocation widens to when a bound is reached. */
      clientId: string;
      issuedAt: number;
      /** The token's expiry, milliseconds since the epoch: after it the entry is no longer needed. */
      until: number;
    }
  | {
      kind: 'client';
      clientId: string;
      /** Tokens issued up to and including this instant (ms) are revoked. */
      before: number;
      /** When the last token issued up to `before` expires at the latest (ms). */
      until: number;
    };

/** What a revocation is checked against: the claims of a verified token. */
interface RevocableToken {
  jti: string;
  clientId: string;
  /** `iat`, milliseconds since the epoch. */
  issuedAt: number;
}

/** REVOCATIONS_PER_CLIENT_MAX and REVOCATIONS_MAX: how many single-token entries the list holds. */
export interface RevocationBounds {
  perClient: number;
  total: number;
}

/** What `add` made of a revocation: the entry as held (widened or merged), and the token entries it replaced. */
export interface HeldRevocation {
  held: Revocation;
  /** The `jti`s of the client's token entries a cut now covers, which the list (and the store) no longer keeps. */
  replaced: string[];
}

type TokenEntry = { issuedAt: number; until: number };

/** The list forgets expired entries at most this often: a walk over every entry is not paid per revocation. */
const PRUNE_EVERY_MS = 1000;

/** Whether a cut (tokens issued up to `before`) covers a token issued at `issuedAt`: its own instant included. */
const covers = (cut: { before: number }, issuedAt: number): boolean => issuedAt <= cut.before;

/**
 * The revocations this process knows of; entries leave once the tokens they name have expired. A client holds at
 * most `perClient` token entries and the list at most `total`: a token revocation past either becomes a cut of its
 * client at the token's `iat`, which refuses the token and every one of that client's tokens issued before it.
 */
export class RevocationList {
  /** Token entries by client, then `jti`: a cut replaces its client's entries without a walk over the others. */
  private readonly tokens = new Map<string, Map<string, TokenEntry>>();
  private readonly clients = new Map<string, { before: number; until: number }>();
  private tokenCount = 0;
  private prunedAt = Number.NEGATIVE_INFINITY;

  /**
   * `loaded`: whether the list holds the deployment's revocations (a list fed by a shared store is not until its
   * first load; tokens are then held back, docs/security.md).
   */
  constructor(
    private readonly bounds: RevocationBounds,
    public loaded = true,
  ) {}

  /** Whether the token is revoked: its `jti` named, or issued up to its client's cut. */
  isRevoked(token: RevocableToken): boolean {
    if (this.tokenCount > 0 && this.tokens.get(token.clientId)?.has(token.jti) === true) return true;
    if (this.clients.size === 0) return false;
    const cut = this.clients.get(token.clientId);
    return cut !== undefined && covers(cut, token.issuedAt);
  }

  /** Adds a revocation, widened into a cut when a bound is reached; says what is held. */
  add(revocation: Revocation): HeldRevocation {
    if (revocation.kind === 'client') return this.cut(revocation);
    const { clientId, jti, issuedAt, until } = revocation;
    const cut = this.clients.get(clientId);
    if (cut !== undefined && covers(cut, issuedAt)) return { held: { kind: 'client', clientId, ...cut }, replaced: [] };
    const own = this.tokens.get(clientId) ?? new Map<string, TokenEntry>();
    const known = own.get(jti);
    if (known === undefined && (own.size >= this.bounds.perClient || this.tokenCount >= this.bounds.total)) {
      return this.cut({ kind: 'client', clientId, before: issuedAt, until });
    }
    if (known === undefined) this.tokenCount += 1;
    own.set(jti, { issuedAt, until: Math.max(until, known?.until ?? 0) });
    this.tokens.set(clientId, own);
    return { held: revocation, replaced: [] };
  }

  /** Forgets what names only expired tokens (at most once a second). */
  prune(now: number): void {
    if (now - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = now;
    for (const [clientId, own] of this.tokens) {
      for (const [jti, entry] of own) if (entry.until <= now) this.drop(own, jti);
      if (own.size === 0) this.tokens.delete(clientId);
    }
    for (const [id, cut] of this.clients) if (cut.until <= now) this.clients.delete(id);
  }

  get size(): number {
    return this.tokenCount + this.clients.size;
  }

  /** Merges a cut with the client's one and drops the token entries it covers. */
  private cut(revocation: Extract<Revocation, { kind: 'client' }>): HeldRevocation {
    const { clientId } = revocation;
    const held = this.clients.get(clientId);
    const merged = {
      before: Math.max(revocation.before, held?.before ?? Number.NEGATIVE_INFINITY),
      until: Math.max(revocation.until, held?.until ?? 0),
    };
    this.clients.set(clientId, merged);
    const replaced: string[] = [];
    const own = this.tokens.get(clientId);
    for (const [jti, entry] of own ?? []) {
      if (!covers(merged, entry.issuedAt)) continue;
      this.drop(own!, jti);
      replaced.push(jti);
    }
    if (own?.size === 0) this.tokens.delete(clientId);
    return { held: { kind: 'client', clientId, ...merged }, replaced };
  }

  private drop(own: Map<string, TokenEntry>, jti: string): void {
    if (own.delete(jti)) this.tokenCount -= 1;
  }
}

/** How far a revocation reaches: `process` (no shared store), `deployment` (Redis or the Durable Object). */
type RevocationReach = 'process' | 'deployment';

/** The deployment's revocations: the list this process checks, fed by the shared store where there is one. */
export interface Revocations {
  readonly list: RevocationList;
  readonly reach: RevocationReach;
  /**
   * Revokes in this process at once, then for the deployment; false when the shared store did not take it yet (this
   * replica refuses the token and keeps pushing the revocation; others may not refuse it yet).
   */
  revoke(revocation: Revocation): Promise<boolean>;
}

/** A process without a shared store: a revocation holds here at once, and nowhere else. */
export function processRevocations(clock: Clock, bounds: RevocationBounds): Revocations {
  const list = new RevocationList(bounds);
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
