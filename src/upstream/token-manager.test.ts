// Unit tests of the upstream token manager, driven by a scripted fake UpstreamHttp and a fake clock.

import { describe, expect, it } from 'vitest';
import { captureLogger, recordingTelemetry, rejection } from '../../test/helpers/recorders.js';
import { GatewayError } from '../base/errors.js';
import {
  UpstreamTransportError,
  type UpstreamHttp,
  type UpstreamRequest,
  type UpstreamResponse,
} from '../base/upstream-http.js';
import { createTokenManager, type TokenManagerOptions } from './token-manager.js';

const T0 = 1_700_000_000_000;
const SECRET = 'client-secret-do-not-leak';
// expires_in "1000" seconds: lifetime 1 000 000 ms, refresh-ahead min(60 s, 10 %) = 60 s,
// safety margin min(5 s, 1 %) = 5 s.
const LIFETIME = 1_000_000;
const REFRESH_AT = T0 + LIFETIME - 60_000;
const USABLE_UNTIL = T0 + LIFETIME - 5_000;

type Handler = (req: UpstreamRequest, call: number) => UpstreamResponse | Promise<UpstreamResponse>;

function tokenOk(token: string, expiresIn: string | number = '1000'): UpstreamResponse {
  return {
    status: 200,
    contentType: 'application/json',
    body: JSON.stringify({
      access_token: token,
      token_type: 'Bearer',
      expires_in: expiresIn,
      scope: [{ service: 'SEARCH_contacts_watch', permission: 'READ', orderId: null }],
      uniqueId: null,
      clientId: 'client-1',
    }),
  };
}

const status = (code: number, body = ''): UpstreamResponse => ({ status: code, contentType: 'application/json', body });

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

const flush = (): Promise<void> => new Promise((r) => setTimeout(r, 0));

function setup(handler: Handler, overrides: Partial<TokenManagerOptions> = {}) {
  const time = { now: T0 };
  const calls: UpstreamRequest[] = [];
  const http: UpstreamHttp = {
    async request(req) {
      calls.push(req);
      return handler(req, calls.length);
    },
  };
  const { telemetry, events } = recordingTelemetry();
  const logger = captureLogger();
  const logs = logger.lines;
  const upstreamTokens = createTokenManager({
    http,
    authUrl: 'https://auth.example/',
    clientId: 'client-1',
    clientSecret: SECRET,
    timeoutMs: 2_000,
    expiresInUnit: 'seconds',
    refreshAheadSeconds: 60,
    clock: () => time.now,
    random: () => 0.5,
    telemetry,
    logger,
    ...overrides,
  });
  return { upstreamTokens, calls, time, events, logs };
}

describe('createTokenManager', () => {
  it('fetches a token with the client-credentials grant at cold start', async () => {
    const s = setup(() => tokenOk('tok-1'));
    expect(await s.upstreamTokens.getToken()).toBe('tok-1');

    expect(s.calls).toHaveLength(1);
    const req = s.calls[0]!;
    expect(req.method).toBe('POST');
    expect(req.url).toBe('https://auth.example/token/login');
    expect(req.headers).toEqual({ 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' });
    expect(req.timeoutMs).toBe(2_000);
    expect(Object.fromEntries(new URLSearchParams(req.body as string))).toEqual({
      grant_type: 'client_credentials',
      client_id: 'client-1',
      client_secret: SECRET,
    });
    expect(s.upstreamTokens.status()).toEqual({
      hasToken: true,
      expiresAt: T0 + LIFETIME,
      lastError: null,
      consecutiveFailures: 0,
      retryAt: null,
    });
    expect(s.events).toEqual([
      ['upstreamCall', 'token', 'ok'],
      ['tokenRefresh', 'ok', 'cold'],
    ]);
  });

  it('reuses the token while it is valid', async () => {
    const s = setup((_, n) => tokenOk(`tok-${n}`));
    expect(await s.upstreamTokens.getToken()).toBe('tok-1');
    s.time.now = REFRESH_AT - 1;
    expect(await s.upstreamTokens.getToken()).toBe('tok-1');
    expect(s.calls).toHaveLength(1);
  });

  it('refreshes ahead of expiry in the background, returning the current token meanwhile', async () => {
    const second = deferred<UpstreamResponse>();
    const s = setup((_, n) => (n === 1 ? tokenOk('tok-1') : second.promise));
    await s.upstreamTokens.getToken();

    s.time.now = REFRESH_AT;
    expect(await s.upstreamTokens.getToken()).toBe('tok-1');
    expect(await s.upstreamTokens.getToken()).toBe('tok-1');
    expect(s.calls).toHaveLength(2);

    second.resolve(tokenOk('tok-2'));
    await flush();
    expect(await s.upstreamTokens.getToken()).toBe('tok-2');
    expect(s.calls).toHaveLength(2);
    expect(s.events).toContainEqual(['tokenRefresh', 'ok', 'ahead']);
  });

  it('hands a refresh ahead of expiry to the runtime background hook, settling when the refresh does', async () => {
    const second = deferred<UpstreamResponse>();
    const handed: Promise<unknown>[] = [];
    const s = setup((_, n) => (n === 1 ? tokenOk('tok-1') : second.promise), {
      background: (work) => handed.push(work),
    });
    await s.upstreamTokens.getToken();
    expect(handed).toHaveLength(0);

    s.time.now = REFRESH_AT;
    expect(await s.upstreamTokens.getToken()).toBe('tok-1');
    expect(handed).toHaveLength(1);
    let settled = false;
    void handed[0]!.then(() => (settled = true));
    await flush();
    expect(settled).toBe(false);
    second.resolve(tokenOk('tok-2'));
    await flush();
    expect(settled).toBe(true);
    expect(await s.upstreamTokens.getToken()).toBe('tok-2');
  });

  it('makes callers wait for the refresh once the token is expired', async () => {
    const second = deferred<UpstreamResponse>();
    const s = setup((_, n) => (n === 1 ? tokenOk('tok-1') : second.promise));
    await s.upstreamTokens.getToken();

    s.time.now = T0 + LIFETIME + 1;
    let settled = false;
    const waiting = s.upstreamTokens.getToken().then((t) => {
      settled = true;
      return t;
    });
    await flush();
    expect(settled).toBe(false);
    expect(s.calls).toHaveLength(2);

    second.resolve(tokenOk('tok-2'));
    expect(await waiting).toBe('tok-2');
    expect(s.events).toContainEqual(['tokenRefresh', 'ok', 'expired']);
  });

  it('never returns a token within its safety margin of expiry', async () => {
    const s = setup((_, n) => (n === 1 ? tokenOk('tok-1') : deferred<UpstreamResponse>().promise));
    await s.upstreamTokens.getToken();
    s.time.now = USABLE_UNTIL - 1;
    expect(await s.upstreamTokens.getToken()).toBe('tok-1');

    s.time.now = USABLE_UNTIL;
    let settled = false;
    void s.upstreamTokens.getToken().finally(() => {
      settled = true;
    });
    await flush();
    expect(settled).toBe(false);
    expect(s.upstreamTokens.status().hasToken).toBe(false);
  });

  it('scales the safety margin down for short-lived tokens', async () => {
    // 100 s lifetime: margin min(5 s, 1 s) = 1 s.
    const s = setup((_, n) => tokenOk(`tok-${n}`, '100'));
    await s.upstreamTokens.getToken();
    s.time.now = T0 + 100_000 - 1_001;
    expect(await s.upstreamTokens.getToken()).toBe('tok-1');
    await flush();
    expect(s.calls).toHaveLength(2);

    const s2 = setup((_, n) => tokenOk(`tok-${n}`, '100'));
    await s2.upstreamTokens.getToken();
    s2.time.now = T0 + 100_000 - 1_000;
    expect(await s2.upstreamTokens.getToken()).toBe('tok-2');
  });

  it('refuses a fresh token that expired while its response was in flight', async () => {
    const s = setup((_, n) => {
      s.time.now += 5_000;
      return tokenOk(`tok-${n}`, '2');
    });
    const err = await rejection(s.upstreamTokens.getToken());
    expect(err.code).toBe('token_unavailable');
  });

  it('makes exactly one token call for 100 concurrent callers at cold start', async () => {
    const answer = deferred<UpstreamResponse>();
    const s = setup(() => answer.promise);
    const all = Array.from({ length: 100 }, () => s.upstreamTokens.getToken());
    answer.resolve(tokenOk('tok-1'));
    expect(await Promise.all(all)).toEqual(Array(100).fill('tok-1'));
    expect(s.calls).toHaveLength(1);
  });

  it('fails all concurrent callers of one failed refresh with a single token call', async () => {
    const answer = deferred<UpstreamResponse>();
    const s = setup(() => answer.promise);
    const all = Array.from({ length: 100 }, () =>
      s.upstreamTokens.getToken().then(
        () => 'ok',
        (e: GatewayError) => e.code,
      ),
    );
    answer.resolve(status(500));
    expect(new Set(await Promise.all(all))).toEqual(new Set(['token_unavailable']));
    expect(s.calls).toHaveLength(1);
  });

  it('does not drop a newer token when a stale one is invalidated', async () => {
    const s = setup((_, n) => tokenOk(`tok-${n}`));
    const requestA = await s.upstreamTokens.getToken();
    const requestB = await s.upstreamTokens.getToken();

    s.upstreamTokens.invalidate(requestA);
    expect(await s.upstreamTokens.getToken()).toBe('tok-2');
    s.upstreamTokens.invalidate(requestB);
    expect(await s.upstreamTokens.getToken()).toBe('tok-2');
    expect(s.calls).toHaveLength(2);
  });

  it('refreshes on the next call after the current token is invalidated', async () => {
    const s = setup((_, n) => tokenOk(`tok-${n}`));
    s.upstreamTokens.invalidate(await s.upstreamTokens.getToken());
    expect(s.upstreamTokens.status().hasToken).toBe(false);
    expect(await s.upstreamTokens.getToken()).toBe('tok-2');
    expect(s.events).toContainEqual(['tokenRefresh', 'ok', 'unauthorized']);
  });

  it('backs off after a failure: fails fast during the backoff, retries after it', async () => {
    const s = setup((_, n) => (n === 1 ? status(500) : tokenOk('tok-1')));
    const first = await rejection(s.upstreamTokens.getToken());
    expect(first.code).toBe('token_unavailable');
    expect(first.status).toBe(503);
    expect(first.headers['retry-after']).toBe('1');
    // random 0.5 of the first cap (1000 ms)
    expect(s.upstreamTokens.status()).toEqual({
      hasToken: false,
      expiresAt: null,
      lastError: 'token endpoint answered 500',
      consecutiveFailures: 1,
      retryAt: T0 + 500,
    });

    s.time.now = T0 + 499;
    expect((await rejection(s.upstreamTokens.getToken())).code).toBe('token_unavailable');
    expect(s.calls).toHaveLength(1);

    s.time.now = T0 + 500;
    expect(await s.upstreamTokens.getToken()).toBe('tok-1');
    expect(s.calls).toHaveLength(2);
    expect(s.upstreamTokens.status()).toMatchObject({ lastError: null, consecutiveFailures: 0, retryAt: null });
  });

  it('keeps the full-jitter backoff within an exponentially growing, capped bound', async () => {
    let r = 0;
    const s = setup(() => status(503), { random: () => r, backoff: { initialMs: 100, maxMs: 1_000 } });
    const caps = [100, 200, 400, 800, 1_000, 1_000, 1_000];
    for (const [i, cap] of caps.entries()) {
      r = Math.random();
      await rejection(s.upstreamTokens.getToken());
      expect(s.calls).toHaveLength(i + 1);
      const delay = (s.upstreamTokens.status().retryAt ?? s.time.now) - s.time.now;
      expect(delay).toBe(Math.floor(r * cap));
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThanOrEqual(cap);
      s.time.now += delay;
    }
  });

  it('keeps serving a still-valid token while a background refresh backs off', async () => {
    const s = setup((_, n) => (n === 1 ? tokenOk('tok-1') : n === 2 ? status(500) : tokenOk('tok-2')));
    await s.upstreamTokens.getToken();

    s.time.now = REFRESH_AT;
    expect(await s.upstreamTokens.getToken()).toBe('tok-1');
    await flush();
    expect(s.upstreamTokens.status()).toMatchObject({
      consecutiveFailures: 1,
      retryAt: REFRESH_AT + 500,
      hasToken: true,
    });
    expect(s.events).toContainEqual(['tokenRefresh', 'error', 'ahead']);

    expect(await s.upstreamTokens.getToken()).toBe('tok-1');
    expect(s.calls).toHaveLength(2);

    s.time.now = REFRESH_AT + 500;
    expect(await s.upstreamTokens.getToken()).toBe('tok-1');
    await flush();
    expect(s.calls).toHaveLength(3);
    expect(await s.upstreamTokens.getToken()).toBe('tok-2');
  });

  it('fails fast once the held token expires during the backoff', async () => {
    const s = setup((_, n) => (n === 1 ? tokenOk('tok-1') : status(500)), {
      backoff: { initialMs: 60_000, maxMs: 60_000 },
    });
    await s.upstreamTokens.getToken();
    s.time.now = USABLE_UNTIL - 1;
    await s.upstreamTokens.getToken();
    await flush();
    s.time.now = USABLE_UNTIL;
    expect((await rejection(s.upstreamTokens.getToken())).code).toBe('token_unavailable');
    expect(s.calls).toHaveLength(2);
  });

  it('counts a malformed 200 as a failure', async () => {
    const s = setup(() => status(200, JSON.stringify({ access_token: 'tok-1', expires_in: '90000abc' })));
    expect((await rejection(s.upstreamTokens.getToken())).code).toBe('token_unavailable');
    expect(s.upstreamTokens.status()).toMatchObject({ hasToken: false, consecutiveFailures: 1 });
    expect(s.upstreamTokens.status().lastError).toMatch(/expires_in/);
    expect(s.events).toEqual([
      ['upstreamCall', 'token', 'malformed'],
      ['tokenRefresh', 'error', 'cold'],
    ]);
  });

  it('counts timeouts and network failures as failures', async () => {
    const s = setup((_, n) => {
      throw new UpstreamTransportError(n === 1 ? 'timeout' : 'network', 'boom');
    });
    await rejection(s.upstreamTokens.getToken());
    expect(s.upstreamTokens.status().lastError).toBe('token endpoint timed out');
    s.time.now = s.upstreamTokens.status().retryAt ?? s.time.now;
    await rejection(s.upstreamTokens.getToken());
    expect(s.upstreamTokens.status()).toMatchObject({
      lastError: 'token endpoint unreachable',
      consecutiveFailures: 2,
    });
    expect(s.events.filter((e) => e[0] === 'upstreamCall')).toEqual([
      ['upstreamCall', 'token', 'timeout'],
      ['upstreamCall', 'token', 'network'],
    ]);
  });

  it('abandons a refresh that never settles and starts another', async () => {
    const s = setup((_, n) => (n === 1 ? new Promise<UpstreamResponse>(() => {}) : tokenOk('tok-2')));
    void s.upstreamTokens.getToken();
    await flush();
    s.time.now = T0 + 1_000;
    void s.upstreamTokens.getToken();
    expect(s.calls).toHaveLength(1);

    s.time.now = T0 + 2_000 + 5_001;
    expect(await s.upstreamTokens.getToken()).toBe('tok-2');
    expect(s.calls).toHaveLength(2);
  });

  it('keeps the token, the client secret and the response body out of errors and logs', async () => {
    const TOKEN = 'tok-very-secret-value';
    const responses: Array<() => UpstreamResponse> = [
      () => tokenOk(TOKEN),
      () => status(401, JSON.stringify({ error: 'invalid_client', echoed: SECRET, body_marker: 'BODY-MARKER' })),
      () => status(200, JSON.stringify({ access_token: TOKEN, expires_in: 'nope', echoed: SECRET })),
      () => status(200, `not json ${TOKEN} ${SECRET}`),
      () => {
        throw new UpstreamTransportError('network', `connect failed ${SECRET}`);
      },
    ];
    const s = setup((_, n) => responses[n - 1]!());
    const messages: string[] = [];
    await s.upstreamTokens.getToken();
    s.upstreamTokens.invalidate(TOKEN);
    for (let i = 1; i < responses.length; i++) {
      const err = await rejection(s.upstreamTokens.getToken());
      messages.push(err.message, String((err.cause as Error | undefined)?.message));
      s.time.now = s.upstreamTokens.status().retryAt ?? s.time.now;
    }
    expect(s.calls).toHaveLength(responses.length);
    expect(s.logs.length).toBeGreaterThan(0);
    const everything = JSON.stringify([messages, s.logs, s.upstreamTokens.status()]);
    for (const secret of [TOKEN, SECRET, 'BODY-MARKER', 'invalid_client']) {
      expect(everything).not.toContain(secret);
    }
  });
});
