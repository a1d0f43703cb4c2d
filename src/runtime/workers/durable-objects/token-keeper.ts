// What the upstream-token Durable Object does, apart from being one: the deployment's one token, persisted, one
// login at a time however many isolates ask, numbered by generation so a 401 drops it only once.
import type { Clock } from '../../../base/clock.js';
import type { Logger } from '../../../observability/logger.js';
import type { TraceCarrier } from '../../../observability/tracing/http-spans.js';
import type { ObtainedToken, SharedToken } from '../../../shared-state/token-store.js';
import { RefreshFailure } from '../../../upstream/token-endpoint.js';
import type { DurableObjectStorage, TokenRefreshReply, TokenWanted } from '../bindings.js';

export interface TokenKeeper {
  read(): Promise<SharedToken | null>;
  /** `trace`: the context of the caller's span, which a login made for it goes under. */
  refresh(wanted: TokenWanted, trace?: TraceCarrier): Promise<TokenRefreshReply>;
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
  /** One login at the upstream (the token manager's own endpoint code), for the caller whose context is `trace`. */
  login: (trace: TraceCarrier | undefined) => Promise<ObtainedToken>;
  clock: Clock;
  logger: Logger;
  /** After a failed login, callers get that failure back without a new login for this long, doubling to `maxMs`. */
  backoff?: { initialMs: number; maxMs: number };
}

/** The object's token as it stands: the stored record once read, the login under way, the last failure. */
interface Keeper {
  options: TokenKeeperOptions;
  state: StoredState | null;
  loading: Promise<StoredState> | null;
  /**
   * A pending outbound fetch does not close the object's input gate: other isolates' calls arrive meanwhile and
   * must join this one login instead of starting their own.
   */
  pending: Promise<TokenRefreshReply> | null;
  failures: number;
  lastFailure: Extract<TokenRefreshReply, { ok: false }> | null;
}

export function createTokenKeeper(options: TokenKeeperOptions): TokenKeeper {
  const k: Keeper = { options, state: null, loading: null, pending: null, failures: 0, lastFailure: null };
  const { clock } = options;
  return {
    async read() {
      const { token } = await load(k);
      return token !== null && token.expiresAt > clock() ? token : null;
    },
    refresh: (wanted, trace) => refresh(k, wanted, trace),
    offer: (offered) => offer(k, offered),
    dropIfCurrent: (generation) => dropIfCurrent(k, generation),
  };
}

async function load(k: Keeper): Promise<StoredState> {
  if (k.state !== null) return k.state;
  k.loading ??= k.options.storage.get<StoredState>(STATE_KEY).then((stored) => {
    k.state = stored?.v === STATE_VERSION ? stored : { v: STATE_VERSION, generation: 0, token: null };
    return k.state;
  });
  return k.loading;
}

const satisfies = (token: SharedToken | null, wanted: TokenWanted, now: number): token is SharedToken =>
  token !== null &&
  (wanted.newerThan === null || token.generation > wanted.newerThan) &&
  token.expiresAt - now >= wanted.validForMs;

/** Numbers and persists `obtained` before anyone gets it: an evicted or restarted object answers with it instead of logging in again. */
async function publish(k: Keeper, obtained: ObtainedToken): Promise<SharedToken> {
  const current = await load(k);
  const token: SharedToken = { ...obtained, generation: current.generation + 1 };
  k.state = { v: STATE_VERSION, generation: token.generation, token };
  await k.options.storage.put(STATE_KEY, k.state);
  return token;
}

async function loginAndPublish(k: Keeper, trace: TraceCarrier | undefined): Promise<TokenRefreshReply> {
  let token: SharedToken;
  try {
    token = await publish(k, await k.options.login(trace));
  } catch (err) {
    return loginFailed(k, err);
  }
  k.failures = 0;
  k.lastFailure = null;
  k.options.logger.info(
    {
      event: 'upstream_token_published',
      generation: token.generation,
      expiresAt: new Date(token.expiresAt).toISOString(),
    },
    'upstream token published to every isolate',
  );
  return { ok: true, token };
}

function loginFailed(k: Keeper, err: unknown): Extract<TokenRefreshReply, { ok: false }> {
  const { options } = k;
  k.failures += 1;
  const failure = err instanceof RefreshFailure ? err : new RefreshFailure('network', 'token login failed');
  const initialMs = options.backoff?.initialMs ?? 1_000;
  const maxMs = options.backoff?.maxMs ?? 30_000;
  const retryAt = options.clock() + Math.min(maxMs, initialMs * 2 ** (k.failures - 1));
  k.lastFailure = {
    ok: false,
    outcome: failure.outcome,
    message: failure.message,
    status: failure.status ?? null,
    retryAt,
  };
  options.logger.warn(
    {
      event: 'upstream_token_login_failed',
      kind: failure.outcome,
      status: failure.status ?? null,
      consecutiveFailures: k.failures,
      retryAt: new Date(retryAt).toISOString(),
    },
    'upstream token login failed',
  );
  return k.lastFailure;
}

/** A caller that joins a login under way gets its answer; that login's span is in the trace of whoever started it. */
async function refresh(k: Keeper, wanted: TokenWanted, trace: TraceCarrier | undefined): Promise<TokenRefreshReply> {
  const { clock } = k.options;
  const { token } = await load(k);
  if (satisfies(token, wanted, clock())) return { ok: true, token };
  if (k.pending !== null) return k.pending;
  // Every isolate retrying a failing endpoint would multiply the load on it; one answer serves them all.
  const { lastFailure } = k;
  if (lastFailure !== null && lastFailure.retryAt !== null && clock() < lastFailure.retryAt) return lastFailure;
  k.pending = loginAndPublish(k, trace).finally(() => {
    k.pending = null;
  });
  return k.pending;
}

async function offer(k: Keeper, offered: ObtainedToken): Promise<SharedToken | null> {
  const { clock, logger } = k.options;
  const { token } = await load(k);
  if (token !== null && token.expiresAt > clock()) return token;
  // A login under way publishes its own token; an offer now would only be replaced by it.
  if (k.pending !== null || offered.expiresAt <= clock()) return null;
  const published = await publish(k, offered);
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
}

async function dropIfCurrent(k: Keeper, generation: number): Promise<boolean> {
  const current = await load(k);
  if (current.token === null || current.token.generation !== generation) return false;
  k.state = { ...current, token: null };
  await k.options.storage.put(STATE_KEY, k.state);
  k.options.logger.info(
    { event: 'upstream_token_dropped', generation },
    'upstream refused the published token; dropped it',
  );
  return true;
}
