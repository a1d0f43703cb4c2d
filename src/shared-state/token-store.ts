// The token-store port: one upstream token (and one refresh) per client id for the whole deployment.
// Implementations: memory (one process, tests), Redis (Node replicas), a Durable Object (Workers).
import type { Span } from '../observability/tracing/span.js';

/** A token as the upstream issued it, before a store numbered it. */
export interface ObtainedToken {
  token: string;
  /** Epoch ms the upstream token expires (counted from when it was asked for). */
  expiresAt: number;
  /** Epoch ms it was asked for. */
  obtainedAt: number;
}

/** A token as the store publishes it to every replica or isolate. */
export interface SharedToken extends ObtainedToken {
  /**
   * Increases with every token the deployment publishes. A 401 drops a token by its generation only
   * (drop-if-current), so N replicas seeing the same 401 cause one refresh, not N.
   */
  generation: number;
}

/** Asks the upstream's token endpoint (client-credentials grant); rejects on any failure. */
export type ObtainToken = () => Promise<ObtainedToken>;

export interface TokenRefreshOptions {
  /** Only a token of a higher generation will do (the caller holds this one and wants a newer one); null: any. */
  newerThan: number | null;
  /** The returned token must stay valid at least this long from now (ms). */
  validForMs: number;
  /** How long a caller that did not get the refresh lease waits for the one who did, before trying itself (ms). */
  waitMs: number;
  /**
   * The span of the request that needs the token: a store that logs in on its own side (the Durable Object) sends
   * its context along, so that login's span is its child, as `obtain`'s is.
   */
  span?: Span | undefined;
}

export interface TokenStore {
  readonly kind: 'memory' | 'redis' | 'durable-object';
  /** The published token, or null when there is none (never published, dropped, expired). */
  read(): Promise<SharedToken | null>;
  /**
   * A token that satisfies `options`: the published one when it does, else one obtained by exactly one caller
   * in the deployment (under a lease, e.g. Redis `SET NX PX`) while the others wait for it to be published.
   * A store that holds the credentials itself (a Durable Object) obtains the token on its side and does not
   * call `obtain`. Rejects with `StoreUnavailableError` when the store cannot be reached (the caller then falls
   * back to its own token), or with `obtain`'s own error when the upstream refused.
   */
  refresh(obtain: ObtainToken, options: TokenRefreshOptions): Promise<SharedToken>;
  /** After an upstream 401: drops the published token only if its generation is still `generation` (atomically). */
  dropIfCurrent(generation: number): Promise<boolean>;
  /**
   * Publish-if-absent, for a process that logged in on its own while the store was down and finds it answering
   * again: publishes `token` (numbered like any other) when no token is published, and keeps the published one
   * otherwise. Resolves to the deployment's token after the offer (this one, numbered, or the one already there),
   * or null when another caller is obtaining one right now (holds the lease) or the published one cannot be read.
   * Never logs in. Rejects with `StoreUnavailableError` when the store cannot be reached.
   */
  offer(token: ObtainedToken): Promise<SharedToken | null>;
}
