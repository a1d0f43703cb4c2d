// The Contact Lookup Service simulator: token and search endpoints over the bundled directory, with fault injection.
import { Hono } from 'hono';
import type { Context } from 'hono';
import { systemClock, type Clock } from '../base/clock.js';
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
  /** Raw `traceparent` values the search endpoint received (W3C Trace Context; absent ones are not listed). */
  traceparentsSeen: string[];
  /** Raw `tracestate` values the search endpoint received. */
  tracestatesSeen: string[];
  /** Raw `traceparent` values the token endpoint received. */
  loginTraceparentsSeen: string[];
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

/** What the simulator counts, for its tests and benches: its stats, the calls per number kept in a map. */
type Counts = Omit<SimulatorStats, 'searchByNumber'> & { searchByNumber: Map<string, number> };

/** Counts from zero, with `inFlight` searches still running (and so the most at once so far). */
const zeroCounts = (inFlight: number): Counts => ({
  tokenCalls: 0,
  searchCalls: 0,
  searchByNumber: new Map(),
  authorizationsSeen: [],
  traceparentsSeen: [],
  tracestatesSeen: [],
  loginTraceparentsSeen: [],
  hugeBodyBytesSent: 0,
  searchesInFlight: inFlight,
  maxSearchesInFlight: inFlight,
  rateLimitedCalls: 0,
});

/** The simulated upstream: its settings, directory, faults, issued tokens and counts. */
interface Sim {
  clients: Readonly<Record<string, string>>;
  clock: Clock;
  random: () => number;
  hangCapMs: number;
  index: DirectoryIndex;
  faults: SimulatorFaults;
  tokens: Map<string, IssuedToken>;
  counts: Counts;
}

export function createSimulator(options: SimulatorOptions = {}): Simulator {
  const sim: Sim = {
    clients: options.clients ?? DEFAULT_SIMULATOR_CLIENTS,
    clock: options.clock ?? systemClock,
    random: options.random ?? Math.random,
    hangCapMs: options.hangCapMs ?? 10 * 60_000,
    index: createDirectoryIndex(options.directory),
    faults: { ...DEFAULT_FAULTS },
    tokens: new Map(),
    counts: zeroCounts(0),
  };
  setFaults(sim, options);

  const app = new Hono();
  app.post('/token/login', function tokenLogin(c) {
    return login(sim, c);
  });
  app.get('/v2/contacts/search', async function searchContacts(c) {
    const { counts } = sim;
    counts.searchCalls++;
    counts.searchesInFlight++;
    counts.maxSearchesInFlight = Math.max(counts.maxSearchesInFlight, counts.searchesInFlight);
    try {
      return await answerSearch(sim, c);
    } finally {
      counts.searchesInFlight--;
    }
  });
  app.notFound((c) => c.json({ error: 'not_found' }, 404));
  app.onError((_err, c) => c.json(INTERNAL_ERROR, 500));
  return { app, controls: controlsOf(sim) };
}

function controlsOf(sim: Sim): SimulatorControls {
  const { counts } = sim;
  return {
    setFaults: (partial) => setFaults(sim, partial),
    faults: () => ({ ...sim.faults }),
    revokeAllTokens: () => sim.tokens.clear(),
    stats: () => ({
      ...counts,
      searchByNumber: Object.fromEntries(counts.searchByNumber),
      authorizationsSeen: [...counts.authorizationsSeen],
      traceparentsSeen: [...counts.traceparentsSeen],
      tracestatesSeen: [...counts.tracestatesSeen],
      loginTraceparentsSeen: [...counts.loginTraceparentsSeen],
    }),
    // Searches still in flight stay counted: they end after the reset.
    resetStats: () => Object.assign(counts, zeroCounts(counts.searchesInFlight)),
  };
}

function setFaults(sim: Sim, partial: Partial<SimulatorFaults>): void {
  const next = { ...sim.faults };
  for (const key of Object.keys(DEFAULT_FAULTS) as (keyof SimulatorFaults)[]) {
    if (partial[key] !== undefined) (next as Record<string, unknown>)[key] = partial[key];
  }
  // null is a value here (no Retry-After), not "leave as is".
  if (Object.hasOwn(partial, 'rateLimitRetryAfter') && partial.rateLimitRetryAfter === null)
    next.rateLimitRetryAfter = null;
  sim.faults = next;
}

/** A JSON-looking body of `bytes` bytes, produced only as fast as the reader takes it. */
function hugeBody(sim: Sim, bytes: number): ReadableStream<Uint8Array> {
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
        sim.counts.hugeBodyBytesSent += piece.length;
        controller.enqueue(piece);
      },
    },
    { highWaterMark: 0 },
  );
}

const happens = (sim: Sim, rate: number) => rate > 0 && sim.random() < rate;
const delayOf = (sim: Sim, latency: Latency) =>
  typeof latency === 'number' ? latency : latency[0] + sim.random() * (latency[1] - latency[0]);

function isUsable(sim: Sim, token: IssuedToken | undefined, now: number): boolean {
  if (!token || now >= token.expiresAt) return false;
  return sim.faults.revokeTokensAfterMs === null || now < token.issuedAt + sim.faults.revokeTokensAfterMs;
}

function sweepTokens(sim: Sim, now: number): void {
  if (sim.tokens.size < TOKEN_SWEEP_THRESHOLD) return;
  for (const [value, token] of sim.tokens) if (!isUsable(sim, token, now)) sim.tokens.delete(value);
}

// RFC 6750 section 3.1: a request without credentials gets the bare challenge, a bad token the error code.
const unauthorized = (c: Context, hadToken: boolean) => {
  c.header('WWW-Authenticate', hadToken ? 'Bearer error="invalid_token"' : 'Bearer');
  return c.json({ error: 'invalid_token' }, 401);
};

async function login(sim: Sim, c: Context): Promise<Response> {
  const { clients } = sim;
  sim.counts.tokenCalls++;
  const traceparent = c.req.header('traceparent');
  if (traceparent !== undefined) sim.counts.loginTraceparentsSeen.push(traceparent);
  await sleep(delayOf(sim, sim.faults.tokenLatencyMs), c.req.raw.signal);
  // Read after the wait: a test may change the faults while a login waits.
  const { faults } = sim;
  c.header('Cache-Control', 'no-store');
  if (happens(sim, faults.tokenErrorRate)) return c.json(INTERNAL_ERROR, 500);

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
  const now = sim.clock();
  sweepTokens(sim, now);
  const accessToken = randomToken();
  sim.tokens.set(accessToken, { clientId, issuedAt: now, expiresAt: now + lifetime * 1000 });
  return c.json({ access_token: accessToken, ...body }, 200);
}

async function answerSearch(sim: Sim, c: Context): Promise<Response> {
  const { counts } = sim;
  const what = c.req.query('what');
  if (what !== undefined) counts.searchByNumber.set(what, (counts.searchByNumber.get(what) ?? 0) + 1);
  const authorization = c.req.header('authorization');
  if (authorization !== undefined) counts.authorizationsSeen.push(authorization);
  const traceparent = c.req.header('traceparent');
  if (traceparent !== undefined) counts.traceparentsSeen.push(traceparent);
  const tracestate = c.req.header('tracestate');
  if (tracestate !== undefined) counts.tracestatesSeen.push(tracestate);

  const signal = c.req.raw.signal;
  await sleep(delayOf(sim, sim.faults.latencyMs), signal);
  // Read after the wait: a test may change the faults while a search waits.
  const { faults } = sim;

  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!match?.[1]) return unauthorized(c, authorization !== undefined);
  if (!isUsable(sim, sim.tokens.get(match[1]), sim.clock())) return unauthorized(c, true);
  if (!what) return c.json({ error: 'invalid_request', message: 'query parameter what is required' }, 400);

  if (happens(sim, faults.rateLimitRate)) {
    counts.rateLimitedCalls++;
    if (faults.rateLimitRetryAfter !== null) c.header('Retry-After', faults.rateLimitRetryAfter);
    return c.json({ error: 'too_many_requests', message: 'Too many requests' }, 429);
  }
  if (happens(sim, faults.hangRate)) {
    // Held open until the client gives up; the cap only bounds clients that never do.
    await sleep(sim.hangCapMs, signal);
    return c.json(INTERNAL_ERROR, 500);
  }
  if (happens(sim, faults.errorRate)) return c.json(INTERNAL_ERROR, 500);
  if (faults.hugeBody) {
    const { bytes, declareLength } = faults.hugeBody;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (declareLength) headers['content-length'] = String(bytes);
    return new Response(hugeBody(sim, bytes), { status: 200, headers });
  }

  const results = sim.index.lookup(toE164(what));
  return c.json({ query: { what }, total: results.length, results }, 200);
}
