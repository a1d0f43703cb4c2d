// The Contact Lookup Service simulator: token and search endpoints over the bundled directory, with fault injection.
import { Hono } from 'hono';
import type { Context } from 'hono';
import { systemClock, type Clock } from '../clock.js';
import { createDirectoryIndex, type DirectoryEntry, type DirectoryIndex } from './directory.js';

/** A fixed delay or a uniform range `[min, max]`, in milliseconds. */
type Latency = number | [min: number, max: number];

export interface SimulatorFaults {
  /** Delay before the search endpoint answers. */
  latencyMs: Latency;
  /** Share (0..1) of searches answering 500. */
  errorRate: number;
  /** Share (0..1) of searches that never answer (until the client gives up, or {@link SimulatorOptions.hangCapMs}). */
  hangRate: number;
  /** Share (0..1) of token requests answering 500. */
  tokenErrorRate: number;
  tokenLatencyMs: Latency;
  /** Lifetime announced in `expires_in` and enforced. */
  tokenLifetimeSeconds: number;
  /** Tokens stop working this long after issue, whatever `expires_in` said; null: never early. */
  revokeTokensAfterMs: number | null;
  /** The token endpoint answers 200 without an `access_token`. */
  malformedToken: boolean;
  /**
   * Searches answer 200 with a body of this many bytes, generated as it is sent (never held whole), with a
   * Content-Length or chunked; null: the normal answer. For the gateway's bound on upstream answers.
   */
  hugeBody: { bytes: number; declareLength: boolean } | null;
  /** Share (0..1) of searches answering 429 Too Many Requests (checked before errors and hangs). */
  rateLimitRate: number;
  /** The `Retry-After` value those 429s carry (seconds or an HTTP-date); null: none. */
  rateLimitRetryAfter: string | null;
}

export interface SimulatorOptions extends Partial<SimulatorFaults> {
  /** Accepted client credentials, id to secret; default `{ "sim-client": "sim-secret" }`. */
  clients?: Record<string, string>;
  clock?: Clock;
  /** Drives fault decisions and latency ranges; default Math.random. */
  random?: () => number;
  /** Directory to serve; default the bundled one. */
  directory?: readonly DirectoryEntry[];
  /** How long a hung search stays open at most when its client never gives up; default 10 minutes. */
  hangCapMs?: number;
}

export interface SimulatorStats {
  tokenCalls: number;
  searchCalls: number;
  /** Search calls per raw `what` value. */
  searchByNumber: Record<string, number>;
  /** Raw Authorization header values the search endpoint received (absent headers are not listed). */
  authorizationsSeen: string[];
  /** Bytes of huge bodies (fault `hugeBody`) handed to the connection so far. */
  hugeBodyBytesSent: number;
  /** Search calls being answered right now, and the most there ever were at once (since the last reset). */
  searchesInFlight: number;
  maxSearchesInFlight: number;
  /** Search calls answered 429. */
  rateLimitedCalls: number;
}

export interface SimulatorControls {
  setFaults(partial: Partial<SimulatorFaults>): void;
  faults(): SimulatorFaults;
  revokeAllTokens(): void;
  stats(): SimulatorStats;
  resetStats(): void;
}

export interface Simulator {
  app: Hono;
  controls: SimulatorControls;
}

const DEFAULT_SIMULATOR_CLIENTS: Readonly<Record<string, string>> = { 'sim-client': 'sim-secret' };

const DEFAULT_FAULTS: SimulatorFaults = {
  latencyMs: 0,
  errorRate: 0,
  hangRate: 0,
  tokenErrorRate: 0,
  tokenLatencyMs: 0,
  tokenLifetimeSeconds: 90000,
  revokeTokensAfterMs: null,
  malformedToken: false,
  hugeBody: null,
  rateLimitRate: 0,
  rateLimitRetryAfter: null,
};

const INTERNAL_ERROR = { error: 'internal_error', message: 'Internal error, please contact support' } as const;
const SCOPE = [{ service: 'SEARCH_contacts_watch', permission: 'READ', orderId: null }] as const;
/** Above this many live tokens, expired ones are swept on issue, so long benchmarks stay bounded. */
const TOKEN_SWEEP_THRESHOLD = 1000;

interface IssuedToken {
  clientId: string;
  issuedAt: number;
  expiresAt: number;
}

/** Waits `ms`, or less when `signal` aborts, so no timer outlives the request it delays. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

function randomToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

/** The real service takes numbers as typed; the simulator accepts E.164 and its common spellings. */
function toE164(what: string): string {
  const compact = what.replace(/[\s\-().]/g, '');
  return compact.startsWith('00') ? `+${compact.slice(2)}` : compact;
}

export function createSimulator(options: SimulatorOptions = {}): Simulator {
  const { clients = DEFAULT_SIMULATOR_CLIENTS, clock = systemClock, random = Math.random } = options;
  const hangCapMs = options.hangCapMs ?? 10 * 60_000;
  const index: DirectoryIndex = createDirectoryIndex(options.directory);
  let faults: SimulatorFaults = { ...DEFAULT_FAULTS };
  setFaults(options);

  const tokens = new Map<string, IssuedToken>();
  let tokenCalls = 0;
  let searchCalls = 0;
  let searchByNumber = new Map<string, number>();
  let authorizationsSeen: string[] = [];
  let hugeBodyBytesSent = 0;

  /** A JSON-looking body of `bytes` bytes, produced only as fast as the reader takes it. */
  function hugeBody(bytes: number): ReadableStream<Uint8Array> {
    const chunk = new TextEncoder().encode(' '.repeat(64 * 1024));
    let left = bytes;
    return new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          if (left <= 0) {
            controller.close();
            return;
          }
          const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
          left -= piece.length;
          hugeBodyBytesSent += piece.length;
          controller.enqueue(piece);
        },
      },
      { highWaterMark: 0 },
    );
  }
  let searchesInFlight = 0;
  let maxSearchesInFlight = 0;
  let rateLimitedCalls = 0;

  function setFaults(partial: Partial<SimulatorFaults>): void {
    const next = { ...faults };
    for (const key of Object.keys(DEFAULT_FAULTS) as (keyof SimulatorFaults)[]) {
      if (partial[key] !== undefined) (next as Record<string, unknown>)[key] = partial[key];
    }
    // null is a value here (no Retry-After), not "leave as is".
    if (Object.hasOwn(partial, 'rateLimitRetryAfter') && partial.rateLimitRetryAfter === null)
      next.rateLimitRetryAfter = null;
    faults = next;
  }

  const happens = (rate: number) => rate > 0 && random() < rate;
  const delayOf = (latency: Latency) =>
    typeof latency === 'number' ? latency : latency[0] + random() * (latency[1] - latency[0]);

  function isUsable(token: IssuedToken | undefined, now: number): boolean {
    if (!token || now >= token.expiresAt) return false;
    return faults.revokeTokensAfterMs === null || now < token.issuedAt + faults.revokeTokensAfterMs;
  }

  function sweepTokens(now: number): void {
    if (tokens.size < TOKEN_SWEEP_THRESHOLD) return;
    for (const [value, token] of tokens) if (!isUsable(token, now)) tokens.delete(value);
  }

  // RFC 6750 section 3.1: a request without credentials gets the bare challenge, a bad token the error code.
  const unauthorized = (c: Context, hadToken: boolean) => {
    c.header('WWW-Authenticate', hadToken ? 'Bearer error="invalid_token"' : 'Bearer');
    return c.json({ error: 'invalid_token' }, 401);
  };

  const app = new Hono();

  app.post('/token/login', async function tokenLogin(c) {
    tokenCalls++;
    await sleep(delayOf(faults.tokenLatencyMs), c.req.raw.signal);
    c.header('Cache-Control', 'no-store');
    if (happens(faults.tokenErrorRate)) return c.json(INTERNAL_ERROR, 500);

    const contentType = c.req.header('content-type') ?? '';
    if (!contentType.toLowerCase().startsWith('application/x-www-form-urlencoded')) {
      return c.json({ error: 'invalid_request', error_description: 'form-encoded body expected' }, 400);
    }
    const form = new URLSearchParams(await c.req.text());
    const grantType = form.get('grant_type');
    if (!grantType) return c.json({ error: 'invalid_request', error_description: 'grant_type missing' }, 400);
    if (grantType !== 'client_credentials') return c.json({ error: 'unsupported_grant_type' }, 400);
    const clientId = form.get('client_id');
    const clientSecret = form.get('client_secret');
    if (!clientId || !clientSecret) {
      return c.json({ error: 'invalid_request', error_description: 'client_id and client_secret required' }, 400);
    }
    if (!Object.hasOwn(clients, clientId) || clients[clientId] !== clientSecret) {
      return c.json({ error: 'invalid_client' }, 401);
    }

    const lifetime = faults.tokenLifetimeSeconds;
    const body = { token_type: 'Bearer', expires_in: String(lifetime), scope: SCOPE, uniqueId: null, clientId };
    if (faults.malformedToken) return c.json(body, 200);
    const now = clock();
    sweepTokens(now);
    const accessToken = randomToken();
    tokens.set(accessToken, { clientId, issuedAt: now, expiresAt: now + lifetime * 1000 });
    return c.json({ access_token: accessToken, ...body }, 200);
  });

  app.get('/v2/contacts/search', async function searchContacts(c) {
    searchCalls++;
    searchesInFlight++;
    maxSearchesInFlight = Math.max(maxSearchesInFlight, searchesInFlight);
    try {
      return await answerSearch(c);
    } finally {
      searchesInFlight--;
    }
  });

  async function answerSearch(c: Context): Promise<Response> {
    const what = c.req.query('what');
    if (what !== undefined) searchByNumber.set(what, (searchByNumber.get(what) ?? 0) + 1);
    const authorization = c.req.header('authorization');
    if (authorization !== undefined) authorizationsSeen.push(authorization);

    const signal = c.req.raw.signal;
    await sleep(delayOf(faults.latencyMs), signal);

    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (!match?.[1]) return unauthorized(c, authorization !== undefined);
    if (!isUsable(tokens.get(match[1]), clock())) return unauthorized(c, true);
    if (!what) return c.json({ error: 'invalid_request', message: 'query parameter what is required' }, 400);

    if (happens(faults.rateLimitRate)) {
      rateLimitedCalls++;
      if (faults.rateLimitRetryAfter !== null) c.header('Retry-After', faults.rateLimitRetryAfter);
      return c.json({ error: 'too_many_requests', message: 'Too many requests' }, 429);
    }
    if (happens(faults.hangRate)) {
      // Held open until the client gives up; the cap only bounds clients that never do.
      await sleep(hangCapMs, signal);
      return c.json(INTERNAL_ERROR, 500);
    }
    if (happens(faults.errorRate)) return c.json(INTERNAL_ERROR, 500);
    if (faults.hugeBody) {
      const { bytes, declareLength } = faults.hugeBody;
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (declareLength) headers['content-length'] = String(bytes);
      return new Response(hugeBody(bytes), { status: 200, headers });
    }

    const results = index.lookup(toE164(what));
    return c.json({ query: { what }, total: results.length, results }, 200);
  }

  app.notFound((c) => c.json({ error: 'not_found' }, 404));
  app.onError((_err, c) => c.json(INTERNAL_ERROR, 500));

  const controls: SimulatorControls = {
    setFaults,
    faults: () => ({ ...faults }),
    revokeAllTokens: () => tokens.clear(),
    stats: () => ({
      tokenCalls,
      searchCalls,
      searchByNumber: Object.fromEntries(searchByNumber),
      authorizationsSeen: [...authorizationsSeen],
      hugeBodyBytesSent,
      searchesInFlight,
      maxSearchesInFlight,
      rateLimitedCalls,
    }),
    resetStats: () => {
      tokenCalls = 0;
      searchCalls = 0;
      searchByNumber = new Map();
      authorizationsSeen = [];
      hugeBodyBytesSent = 0;
      maxSearchesInFlight = searchesInFlight;
      rateLimitedCalls = 0;
    },
  };

  return { app, controls };
}
