// Unit tests of the upstream search client over a scripted fake UpstreamHttp, a real token manager and a fake clock.

import { describe, expect, it } from 'vitest';
import { captureLogger, recordingTelemetry, rejection } from '../../test/helpers/recorders.js';
import { GatewayError } from '../base/errors.js';
import {
  UpstreamTransportError,
  type UpstreamHttp,
  type UpstreamRequest,
  type UpstreamResponse,
} from '../base/upstream-http.js';
import { UpstreamRateLimitedError } from './rate-limited.js';
import { createSearchClient } from './search-client.js';
import { createTokenManager, type TokenManager } from './token-manager.js';

const T0 = 1_700_000_000_000;
const NUMBER = '+442079460001';
const BODY_MARKER = 'Muster Hans';

type Handler = (req: UpstreamRequest, call: number) => UpstreamResponse | Promise<UpstreamResponse>;

const tokenOk = (token: string): UpstreamResponse => ({
  status: 200,
  contentType: 'application/json',
  body: JSON.stringify({
    access_token: token,
    token_type: 'Bearer',
    expires_in: '90000',
    scope: [],
    uniqueId: null,
    clientId: 'c',
  }),
});

const answer = (status: number, body = '', contentType: string | null = 'application/json'): UpstreamResponse => ({
  status,
  contentType,
  body,
});

// Odd spacing and non-ASCII on purpose: any re-serialisation would change the bytes.
const RESULT_BODY = `{ "query": {"what":"${NUMBER}"},\n  "total": 1, "results": [ {"displayName":"${BODY_MARKER}","address":{"locality":"Stäfa"}} ] }`;

function setup(search: Handler, token: Handler = (_, n) => tokenOk(`tok-${n}`)) {
  const time = { now: T0 };
  const tokenCalls: UpstreamRequest[] = [];
  const searchCalls: UpstreamRequest[] = [];
  const http: UpstreamHttp = {
    async request(req) {
      if (req.url.endsWith('/token/login')) {
        tokenCalls.push(req);
        return token(req, tokenCalls.length);
      }
      searchCalls.push(req);
      return search(req, searchCalls.length);
    },
  };
  const { telemetry, events } = recordingTelemetry();
  const logger = captureLogger();
  const logs = logger.lines;
  const clock = () => time.now;
  const upstreamTokens = createTokenManager({
    http,
    authUrl: 'https://auth.example',
    clientId: 'c',
    clientSecret: 's',
    timeoutMs: 2_000,
    expiresInUnit: 'seconds',
    refreshAheadSeconds: 60,
    clock,
    random: () => 0.5,
    telemetry,
    logger,
  });
  const client = createSearchClient({
    http,
    upstreamTokens,
    baseUrl: 'https://api.example/',
    timeoutMs: 1_000,
    clock,
    telemetry,
    logger,
  });
  return { client, upstreamTokens, time, tokenCalls, searchCalls, events, logs };
}

function expectNothingLeaked(err: GatewayError, logs: unknown): void {
  const text = JSON.stringify([err.message, logs]);
  for (const secret of ['442079460001', 'tok-', BODY_MARKER]) expect(text).not.toContain(secret);
}

describe('createSearchClient', () => {
  it('passes the upstream body through unchanged', async () => {
    const s = setup(() => answer(200, RESULT_BODY, 'application/json; charset=utf-8'));
    const result = await s.client.search(NUMBER);
    expect(result).toEqual({ body: RESULT_BODY, contentType: 'application/json; charset=utf-8' });
    expect(s.searchCalls[0]!.url).toBe('https://api.example/v2/contacts/search?what=%2B442079460001');
    expect(s.events).toContainEqual(['upstreamCall', 'search', 'ok']);
  });

  it('labels a JSON body as JSON when the upstream names no or another content type', async () => {
    for (const contentType of [null, 'text/plain', 'application/problem+json']) {
      const s = setup(() => answer(200, '{"total":0,"results":[]}', contentType));
      const expected = contentType === 'application/problem+json' ? contentType : 'application/json';
      expect((await s.client.search(NUMBER)).contentType).toBe(expected);
    }
  });

  it("sends only the gateway's own token", async () => {
    const s = setup(() => answer(200, RESULT_BODY));
    await s.client.search(NUMBER);
    const req = s.searchCalls[0]!;
    expect(req.method).toBe('GET');
    expect(req.body).toBeUndefined();
    expect(req.headers).toEqual({ authorization: 'Bearer tok-1', accept: 'application/json' });
  });

  it('retries once after an upstream 401 with a fresh token', async () => {
    const s = setup((_, n) => (n === 1 ? answer(401) : answer(200, RESULT_BODY)));
    expect((await s.client.search(NUMBER)).body).toBe(RESULT_BODY);
    expect(s.searchCalls.map((r) => r.headers['authorization'])).toEqual(['Bearer tok-1', 'Bearer tok-2']);
    expect(s.tokenCalls).toHaveLength(2);
    expect(s.events).toContainEqual(['tokenRefresh', 'ok', 'unauthorized']);
    expect(s.events.filter((e) => e[1] === 'search')).toEqual([
      ['upstreamCall', 'search', 'unauthorized'],
      ['upstreamCall', 'search', 'ok'],
    ]);
  });

  it('answers upstream_error (502) after a second 401, without a third attempt', async () => {
    const s = setup(() => answer(401));
    const err = await rejection(s.client.search(NUMBER));
    expect(err.code).toBe('upstream_error');
    expect(err.status).toBe(502);
    expect(err.message).toBe("the upstream refused the gateway's credentials");
    expect(s.searchCalls).toHaveLength(2);
    expectNothingLeaked(err, s.logs);
  });

  it('answers upstream_error on an upstream 500, without retrying', async () => {
    const s = setup(() => answer(500, `{"error":"${BODY_MARKER}"}`));
    const err = await rejection(s.client.search(NUMBER));
    expect(err.code).toBe('upstream_error');
    expect(s.searchCalls).toHaveLength(1);
    expect(s.events).toContainEqual(['upstreamCall', 'search', 'server_error']);
    expectNothingLeaked(err, s.logs);
  });

  it('answers upstream_error on other unexpected statuses', async () => {
    const s = setup(() => answer(404));
    expect((await rejection(s.client.search(NUMBER))).code).toBe('upstream_error');
    expect(s.events).toContainEqual(['upstreamCall', 'search', 'client_error']);
  });

  it('answers upstream_timeout when the search times out', async () => {
    const s = setup(() => {
      throw new UpstreamTransportError('timeout', 'no answer');
    });
    const err = await rejection(s.client.search(NUMBER));
    expect(err.code).toBe('upstream_timeout');
    expect(err.status).toBe(504);
    expect(s.events).toContainEqual(['upstreamCall', 'search', 'timeout']);
  });

  it('answers upstream_error when the upstream cannot be reached', async () => {
    const s = setup(() => {
      throw new UpstreamTransportError('network', 'connection failed');
    });
    expect((await rejection(s.client.search(NUMBER))).code).toBe('upstream_error');
    expect(s.events).toContainEqual(['upstreamCall', 'search', 'network']);
  });

  it('answers upstream_error on a 200 whose body is not a JSON object', async () => {
    for (const body of [`<html>${BODY_MARKER}</html>`, '[1,2]', 'null', '']) {
      const s = setup(() => answer(200, body));
      const err = await rejection(s.client.search(NUMBER));
      expect(err.code).toBe('upstream_error');
      expect(s.events).toContainEqual(['upstreamCall', 'search', 'malformed']);
      expectNothingLeaked(err, s.logs);
    }
  });

  it('keeps token_unavailable (503) when no upstream token can be had', async () => {
    const s = setup(
      () => answer(200, RESULT_BODY),
      () => answer(500),
    );
    const err = await rejection(s.client.search(NUMBER));
    expect(err.code).toBe('token_unavailable');
    expect(err.status).toBe(503);
    expect(s.searchCalls).toHaveLength(0);
  });

  it('shares one deadline: a slow token fetch leaves less time for the search', async () => {
    const s = setup(
      () => answer(200, RESULT_BODY),
      (_, n) => {
        s.time.now += 700;
        return tokenOk(`tok-${n}`);
      },
    );
    await s.client.search(NUMBER);
    expect(s.searchCalls[0]!.timeoutMs).toBe(300);
  });

  it('gives the retry after a 401 only what is left of the deadline', async () => {
    const s = setup(
      (_, n) => {
        s.time.now += 400;
        return n === 1 ? answer(401) : answer(200, RESULT_BODY);
      },
      (_, n) => {
        if (n === 2) s.time.now += 100;
        return tokenOk(`tok-${n}`);
      },
    );
    await s.client.search(NUMBER);
    expect(s.searchCalls.map((r) => r.timeoutMs)).toEqual([1_000, 500]);
  });

  it('answers upstream_timeout without searching when the token fetch used the whole deadline', async () => {
    const s = setup(
      () => answer(200, RESULT_BODY),
      (_, n) => {
        s.time.now += 1_000;
        return tokenOk(`tok-${n}`);
      },
    );
    expect((await rejection(s.client.search(NUMBER))).code).toBe('upstream_timeout');
    expect(s.searchCalls).toHaveLength(0);
  });

  it('stops waiting for a token when the deadline passes', async () => {
    const searchCalls: UpstreamRequest[] = [];
    const http: UpstreamHttp = {
      async request(req) {
        searchCalls.push(req);
        return answer(200, RESULT_BODY);
      },
    };
    const stuck: TokenManager = {
      getToken: () => new Promise<string>(() => {}),
      invalidate: () => {},
      status: () => ({ hasToken: false, expiresAt: null, lastError: null, consecutiveFailures: 0, retryAt: null }),
    };
    const client = createSearchClient({ http, upstreamTokens: stuck, baseUrl: 'https://api.example', timeoutMs: 30 });
    expect((await rejection(client.search(NUMBER))).code).toBe('upstream_timeout');
    expect(searchCalls).toHaveLength(0);
  });
});

describe('search client: an upstream 429', () => {
  it('surfaces a 429 with its Retry-After in seconds, counted as rate_limited', async () => {
    const { client, events } = setup(() => ({ ...answer(429, '{"error":"too_many_requests"}'), retryAfter: '3' }));
    const err = await rejection(client.search(NUMBER));
    expect(err).toBeInstanceOf(UpstreamRateLimitedError);
    expect((err as UpstreamRateLimitedError).retryAfterMs).toBe(3_000);
    expect(err.code).toBe('upstream_rate_limited');
    expect(err.headers['retry-after']).toBe('3');
    expect(events).toContainEqual(['upstreamCall', 'search', 'rate_limited']);
  });

  it('reads an HTTP-date Retry-After on the injected clock, and none as null', async () => {
    const at = new Date(T0 + 42_000).toUTCString();
    const dated = setup(() => ({ ...answer(429), retryAfter: at }));
    expect(((await rejection(dated.client.search(NUMBER))) as UpstreamRateLimitedError).retryAfterMs).toBe(42_000);
    const bare = setup(() => answer(429));
    expect(((await rejection(bare.client.search(NUMBER))) as UpstreamRateLimitedError).retryAfterMs).toBeNull();
  });

  it('ends the lookup at a deadline handed in by a caller who queued first', async () => {
    const { client, time, searchCalls } = setup(() => answer(200, RESULT_BODY));
    await rejection(client.search(NUMBER, { deadline: time.now }));
    expect(searchCalls).toHaveLength(0);
    await client.search(NUMBER, { deadline: time.now + 500 });
    expect(searchCalls[0]!.timeoutMs).toBe(500);
  });
});

describe('search client: one parse of the body', () => {
  function withResultsPath(body: string) {
    const t = setup(() => answer(200, body));
    const client = createSearchClient({
      http: { request: async (req) => (req.url.endsWith('/token/login') ? tokenOk('tok') : answer(200, body)) },
      upstreamTokens: t.upstreamTokens,
      baseUrl: 'https://api.example',
      timeoutMs: 1_000,
      clock: () => t.time.now,
      resultsPath: 'results',
    });
    return client;
  }

  it('says whether the answer lists anything, from the parse that vouched for it, and keeps the bytes', async () => {
    const listed = await withResultsPath(RESULT_BODY).search(NUMBER);
    expect(listed).toEqual({ body: RESULT_BODY, contentType: 'application/json', listed: true });
    const empty = '{"total":0,"results":[]}';
    expect((await withResultsPath(empty).search(NUMBER)).listed).toBe(false);
    expect((await withResultsPath('{"elsewhere":[1]}').search(NUMBER)).listed).toBe(false);
  });

  it('uses a held token without waiting on the token manager', async () => {
    const t = setup(() => answer(200, RESULT_BODY));
    await t.client.search(NUMBER);
    expect(t.upstreamTokens.peek!()).toBe('tok-1');
    t.time.now += 90_000 * 1000;
    expect(t.upstreamTokens.peek!()).toBeUndefined();
  });
});
