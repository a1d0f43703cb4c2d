// What the upstream-token Durable Object does, apart from being one: the deployment's one token, persisted, one
// login at a time however many isolates ask, numbered by generation so a 401 drops it only once.
import type { Clock } from '../../../clock.js';
import type { Logger } from '../../../observability/logger.js';
import type { ObtainedToken, SharedToken } from '../../../shared-state/token-store.js';
import { RefreshFailure } from '../../../upstream/token-endpoint.js';
import type { DurableObjectStorage, TokenRefreshReply, TokenWanted } from '../bindings.js';

export interface TokenKeeper {
  read(): Promise<SharedToken | null>;
  refresh(wanted: TokenWanted): Promise<TokenRefreshReply>;
  dropIfCurrent(generation: number): Promise<boolean>;
  /** Publish-if-absent of an isolate's own token (the port's `offer`). */
  offer(token: ObtainedToken): Promise<SharedToken | null>;
}

/** Version of the stored record; another version is ignored (and replaced at the next login). */
const STATE_VERSION = 1;
const STATE_KEY = 'state';

interface StoredState {
  v: typeof STATE_VERSION;
  /** The last generation handed out; kept after a drop so generations never repeat. */
  generation: number;
  token: SharedToken | null;
}

export interface TokenKeeperOptions {
  storage: DurableObjectStorage;
  /** One login at the upstream (the token manager's own endpoint code). */
  login: () => Promise<ObtainedToken>;
  clock: Clock;
  logger: Logger;
  /** After a failed login, callers get that failure back without a new login for this long, doubling to `maxMs`. */
  backoff?: { initialMs: number; maxMs: number };
}

export function createTokenKeeper(options: TokenKeeperOptions): TokenKeeper {
  const { storage, login, clock, logger } = options;
  const initialBackoffMs = options.backoff?.initialMs ?? 1_000;
  const maxBackoffMs = options.backoff?.maxMs ?? 30_000;
  let state: StoredState | null = null;
  let loading: Promise<StoredState> | null = null;
  // A pending outbound fetch does not close the object's input gate: other isolates' calls arrive meanwhile and
  // must join this one login instead of starting their own.
  let pending: Promise<TokenRefreshReply> | null = null;
  let failures = 0;
  let lastFailure: Extract<TokenRefreshReply, { ok: false }> | null = null;

  async function load(): Promise<StoredState> {
    if (state !== null) return state;
    loading ??= storage.get<StoredState>(STATE_KEY).then((stored) => {
      state = stored?.v === STATE_VERSION ? stored : { v: STATE_VERSION, generation: 0, token: null };
      return state;
    });
    return loading;
  }

  const satisfies = (token: SharedToken | null, wanted: TokenWanted): token is SharedToken =>
    token !== null &&
    (wanted.newerThan === null || token.generation > wanted.newerThan) &&
    token.expiresAt - clock() >= wanted.validForMs;

  /** Numbers and persists `obtained` before anyone gets it: an evicted or restarted object answers with it instead of logging in again. */
  async function publish(obtained: ObtainedToken): Promise<SharedToken> {
    const current = await load();
    const token: SharedToken = { ...obtained, generation: current.generation + 1 };
    state = { v: STATE_VERSION, generation: token.generation, token };
    await storage.put(STATE_KEY, state);
    return token;
  }

  async function loginAndPublish(): Promise<TokenRefreshReply> {
    try {
      const token = await publish(await login());
      failures = 0;
      lastFailure = null;
      logger.info(
        {
          event: 'upstream_token_published',
          generation: token.generation,
          expiresAt: new Date(token.expiresAt).toISOString(),
        },
        'upstream token published to every isolate',
      );
      return { ok: true, token };
    } catch (err) {
      failures += 1;
      const failure = err instanceof RefreshFailure ? err : new RefreshFailure('network', 'token login failed');
      const retryAt = clock() + Math.min(maxBackoffMs, initialBackoffMs * 2 ** (failures - 1));
      lastFailure = {
        ok: false,
        outcome: failure.outcome,
        message: failure.message,
        status: failure.status ?? null,
        retryAt,
      };
      logger.warn(
        {
          event: 'upstream_token_login_failed',
          kind: failure.outcome,
          status: failure.status ?? null,
          consecutiveFailures: failures,
          retryAt: new Date(retryAt).toISOString(),
        },
        'upstream token login failed',
      );
      return lastFailure;
    }
  }

  return {
    async read() {
      const { token } = await load();
      return token !== null && token.expiresAt > clock() ? token : null;
    },

    async refresh(wanted) {
      const { token } = await load();
      if (satisfies(token, wanted)) return { ok: true, token };
      if (pending !== null) return pending;
      // Every isolate retrying a failing endpoint would multiply the load on it; one answer serves them all.
      if (lastFailure !== null && lastFailure.retryAt !== null && clock() < lastFailure.retryAt) return lastFailure;
      pending = loginAndPublish().finally(() => {
        pending = null;
      });
      return pending;
    },

    async offer(offered) {
      const { token } = await load();
      if (token !== null && token.expiresAt > clock()) return token;
      // A login under way publishes its own token; an offer now would only be replaced by it.
      if (pending !== null || offered.expiresAt <= clock()) return null;
      const published = await publish(offered);
      logger.info(
        {
          event: 'upstream_token_published',
          generation: published.generation,
          expiresAt: new Date(published.expiresAt).toISOString(),
          offered: true,
        },
        'an isolate offered its own upstream token; published to every isolate',
      );
      return published;
    },

    async dropIfCurrent(generation) {
      const current = await load();
      if (current.token === null || current.token.generation !== generation) return false;
      state = { ...current, token: null };
      await storage.put(STATE_KEY, state);
      logger.info({ event: 'upstream_token_dropped', generation }, 'upstream refused the published token; dropped it');
      return true;
    },
  };
}
