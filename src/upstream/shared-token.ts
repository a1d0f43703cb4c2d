// Getting the upstream token through the deployment's token store (one login for all replicas), and this
// process's own login when the store cannot answer: down, or slower than its timeout.
import type { Span } from '../observability/tracing/span.js';
import type { StoreHealth } from '../shared-state/store-health.js';
import { StoreUnavailableError } from '../shared-state/store-unavailable.js';
import type { ObtainedToken, ObtainToken, TokenStore } from '../shared-state/token-store.js';

/**
 * The process's own login; `span`: the request's, which the login's span goes under; `started` is told that span as
 * the login begins.
 */
type OwnLogin = (span?: Span, started?: (login: Span) => void) => Promise<ObtainedToken>;

/** A token this process may use: the deployment's (numbered by the store) or, while the store fails, its own (null). */
export interface SourcedToken extends ObtainedToken {
  generation: number | null;
}

interface SharedTokenWanted {
  /** Only a token of a higher generation will do; null: any. */
  newerThan: number | null;
  validForMs: number;
}

export interface SharedTokenSource {
  /**
   * Rejects only with the upstream's own failure (from `ownObtain`), never with the store's. `span`: the request
   * that needs the token; a login made for it, here or by the store, goes under it (`started` is told the span of
   * one made here).
   */
  obtain(wanted: SharedTokenWanted, span?: Span, started?: (login: Span) => void): Promise<SourcedToken>;
  /** After an upstream 401 on the token of `generation`: drops it deployment-wide if still current. In the background. */
  drop(generation: number): void;
  /**
   * For a process on its own token (it fell back while the store was down): asks the store once whether it
   * answers again. If so the store counts as up, and this resolves to the deployment's token when one is
   * published that `acceptable` takes, or to `own` numbered by the store when none was (offered: the others then
   * adopt it). Null (keep the own token) when the store still fails, is busy logging in, or holds one not taken.
   * Never rejects, never logs in; bounded by a few store timeouts.
   */
  rejoin(own: ObtainedToken, acceptable: (token: SourcedToken) => boolean): Promise<SourcedToken | null>;
}

export interface SharedTokenSourceOptions {
  store: TokenStore;
  health: StoreHealth;
  /** The process's own login at the upstream's token endpoint. */
  ownObtain: OwnLogin;
  /** One store command's bound (REDIS_TIMEOUT_MS). */
  storeTimeoutMs: number;
  /** How long to wait for another replica's login before trying the lease (and, failing that, logging in) itself. */
  waitMs: number;
}

/**
 * Store commands a refresh may make before the login (read, lease, re-read, one poll in flight at the end of
 * the wait) and after it (publish): beyond these bounds the store counts as down.
 */
const COMMANDS_BEFORE_LOGIN = 4;
const COMMANDS_AFTER_LOGIN = 2;
/** A rejoin reads, then offers (which may read again). */
const COMMANDS_OF_REJOIN = 3;

export function createSharedTokenSource(options: SharedTokenSourceOptions): SharedTokenSource {
  const { store, health, ownObtain, storeTimeoutMs, waitMs } = options;
  const beforeLoginMs = waitMs + COMMANDS_BEFORE_LOGIN * storeTimeoutMs;
  const afterLoginMs = COMMANDS_AFTER_LOGIN * storeTimeoutMs;

  async function obtain(
    wanted: SharedTokenWanted,
    span?: Span,
    started?: (login: Span) => void,
  ): Promise<SourcedToken> {
    let loggedIn: ObtainedToken | undefined;
    let loginFailure: { error: unknown } | undefined;
    // Once this process stopped waiting for the store, a late call of the store into the upstream would be a
    // second login: refuse it.
    let abandoned = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let giveUp!: (err: unknown) => void;
    const guard = new Promise<never>((_, reject) => {
      giveUp = reject;
    });
    const arm = (ms: number): void => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        abandoned = true;
        giveUp(new StoreUnavailableError('token', `token store did not answer within ${ms} ms`));
      }, ms);
    };

    const loginForStore: ObtainToken = async () => {
      if (abandoned) throw new StoreUnavailableError('token', 'token store call abandoned');
      // The login has its own timeout; only the store's own time counts against the store.
      clearTimeout(timer);
      try {
        loggedIn = await ownObtain(span, started);
        return loggedIn;
      } catch (err) {
        loginFailure = { error: err };
        throw err;
      } finally {
        if (!abandoned) arm(afterLoginMs);
      }
    };

    arm(beforeLoginMs);
    try {
      const shared = await Promise.race([store.refresh(loginForStore, { ...wanted, waitMs, span }), guard]);
      health.up();
      return shared;
    } catch (err) {
      // The upstream refused or failed: not the store's fault; the caller backs off as without a store. A store
      // that logs in on its own side (the Workers Durable Object) rejects with the login's failure itself: only
      // StoreUnavailableError means the store is down (the port's contract).
      if (loginFailure !== undefined || !(err instanceof StoreUnavailableError)) {
        health.up();
        throw loginFailure !== undefined ? loginFailure.error : err;
      }
      health.down(err);
      // Logged in, then the store failed to publish: use that token here rather than log in again.
      if (loggedIn !== undefined) return { ...loggedIn, generation: null };
      return { ...(await ownObtain(span, started)), generation: null };
    } finally {
      abandoned = true;
      clearTimeout(timer);
    }
  }

  async function rejoin(
    own: ObtainedToken,
    acceptable: (token: SourcedToken) => boolean,
  ): Promise<SourcedToken | null> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let late = false;
    const bound = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        late = true;
        reject(new StoreUnavailableError('token', 'token store did not answer the rejoin in time'));
      }, COMMANDS_OF_REJOIN * storeTimeoutMs);
    });
    const ask = async (): Promise<SourcedToken | null> => {
      const published = await store.read();
      // An answer after the bound says nothing about now, and must not publish a token this process may have dropped.
      if (late) return null;
      health.up();
      if (published !== null) return acceptable(published) ? published : null;
      const after = await store.offer(own);
      return after !== null && acceptable(after) ? after : null;
    };
    try {
      return await Promise.race([ask(), bound]);
    } catch (err) {
      // Still down (or down again between the read and the offer): one transition at most, the own token stays.
      if (health.isUp) health.down(err);
      return null;
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    obtain,
    rejoin,
    drop(generation) {
      store.dropIfCurrent(generation).then(
        () => health.up(),
        (err: unknown) => health.down(err),
      );
    },
  };
}
