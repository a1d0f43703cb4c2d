// GET /v2/contacts/cnam over real sockets: the caller name as folded ASCII, the fallback and CNAM-Result per
// cause, HTTP Basic and Bearer credentials; upstream calls counted at the simulator.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { awayFromMinuteEnd, sleep } from '../helpers/guard-stack.js';
import { basicAuth, basicOf, cnam } from '../helpers/pbx.js';
import { CLIENTS, startStack, type Stack } from '../helpers/stack.js';

describe('CNAM', () => {
  let stack: Stack;
  const upstreamCalls = () => stack.simulator.controls.stats().searchCalls;

  beforeAll(async () => {
    stack = await startStack({ env: { UPSTREAM_TIMEOUT_MS: '2000' } });
  });
  afterAll(() => stack.close());
  afterEach(() => {
    stack.simulator.controls.setFaults({ latencyMs: 0, errorRate: 0 });
    stack.gateway.services.lookupCache.clear();
    stack.simulator.controls.resetStats();
  });

  it("answers the first result's display name as ASCII text with HTTP Basic credentials", async () => {
    const answer = await cnam(stack, '020 7946 0002');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(answer.name).toBe('Muller Jonas');
    expect(answer.result).toBe('listed');
    expect(answer.headers.get('cache-status')).toMatch(/fwd=miss; fwd-status=200; stored/);
    expect(upstreamCalls()).toBe(1);
  });

  it('cuts a long name at a word boundary within 15 characters', async () => {
    expect((await cnam(stack, '+44 20 7946 0013')).name).toBe('Lantern Row');
    expect((await cnam(stack, '+441614960002')).name).toBe('Muller & Sohne');
  });

  it('accepts a gateway token as well, and the next ring is a hit', async () => {
    const token = await stack.login('pbx');
    const first = await cnam(stack, '+447700900005', { authorization: `Bearer ${token}` });
    const again = await cnam(stack, '07700 900005', { authorization: `Bearer ${token}` });
    expect([first.name, again.name]).toEqual(['Pena Jose', 'Pena Jose']);
    expect(again.headers.get('cache-status')).toMatch(/^callerid-gateway; hit; ttl=/);
    expect(upstreamCalls()).toBe(1);
  });

  it('answers 200 with the empty fallback and no-listing for an unlisted number', async () => {
    const answer = await cnam(stack, '020 7946 0999');
    expect([answer.status, answer.name, answer.result]).toEqual([200, '', 'no-listing']);
  });

  it.each(['anonymous', 'unknown', '201', 'Restricted', '', undefined])(
    'answers %j as not-a-number without an upstream call',
    async (what) => {
      const answer = await cnam(stack, what);
      expect([answer.status, answer.name, answer.result]).toEqual([200, '', 'not-a-number']);
      expect(upstreamCalls()).toBe(0);
    },
  );

  it('answers upstream-error with the fallback when the upstream fails', async () => {
    stack.simulator.controls.setFaults({ errorRate: 1 });
    const answer = await cnam(stack, '+442079460003');
    expect([answer.status, answer.name, answer.result]).toEqual([200, '', 'upstream-error']);
    expect(answer.headers.get('cache-status')).toBe('callerid-gateway; fwd=miss; detail=upstream-error');
  });

  it('answers deadline with the fallback by Prefer: wait, and the next ring gets the name from the cache', async () => {
    stack.simulator.controls.setFaults({ latencyMs: 700 });
    const late = await cnam(stack, '+442079460004', { prefer: 'wait=0.2' });
    expect([late.status, late.name, late.result]).toEqual([200, '', 'deadline']);
    expect(late.ms).toBeLessThan(600);
    expect(late.headers.get('preference-applied')).toBe('wait=0.2');
    await sleep(700);
    const next = await cnam(stack, '+442079460004', { prefer: 'wait=0.2' });
    // "Lefèvre François" folds to 16 characters: cut at the word boundary.
    expect([next.name, next.result]).toEqual(['Lefevre', 'listed']);
    expect(upstreamCalls()).toBe(1);
  });

  it('answers 401 with a Basic challenge for a wrong secret, an unknown client, a malformed header or none', async () => {
    for (const authorization of [
      basicAuth('pbx', 'wrong-secret'),
      basicAuth('nobody', CLIENTS.pbx),
      'Basic !!!',
      'Basic ' + btoa('no-colon'),
      '',
    ]) {
      const answer = await cnam(stack, '+442079460002', { authorization });
      expect([answer.status, answer.name, answer.result], authorization).toEqual([401, '', 'unauthorized']);
      expect(answer.headers.get('www-authenticate')).toContain('Basic realm="callerid-gateway"');
    }
    expect(upstreamCalls()).toBe(0);
  });

  it('lets the JSON search route take HTTP Basic credentials too', async () => {
    const res = await fetch(`${stack.gateway.url}/v2/contacts/search?what=%2B442079460002`, {
      headers: { authorization: basicOf('crm') },
    });
    expect(res.status).toBe(200);
    expect((await res.json()).results[0].displayName).toBe('Müller Jonas');
    const wrong = await fetch(`${stack.gateway.url}/v2/contacts/search?what=%2B442079460002`, {
      headers: { authorization: basicAuth('crm', 'nope') },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('content-type')).toBe('application/problem+json');
    expect(wrong.headers.get('www-authenticate')).toMatch(
      /^Bearer realm="callerid-gateway", Basic realm="callerid-gateway"/,
    );
  });
});

describe('CNAM fallbacks configured', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({
      env: {
        UPSTREAM_TIMEOUT_MS: '2000',
        CNAM_FALLBACK: 'Unknown caller',
        CNAM_DEADLINE_MS: '200',
        CLIENT_UPSTREAM_QUOTA_PER_DAY: '1',
        CLIENT_RATE_PER_MINUTE: '4',
      },
    });
  });
  afterAll(() => stack.close());

  it('answers CNAM_FALLBACK for no listing and for an impossible number', async () => {
    expect((await cnam(stack, '020 7946 0998')).name).toBe('Unknown caller');
    expect((await cnam(stack, 'anonymous')).name).toBe('Unknown caller');
  });

  it('answers quota-exhausted once the client has spent its upstream calls', async () => {
    // The first test spent pbx's one upstream call of the day.
    const answer = await cnam(stack, '020 7946 0997');
    expect([answer.status, answer.name, answer.result]).toEqual([200, 'Unknown caller', 'quota-exhausted']);
  });

  it('answers deadline by CNAM_DEADLINE_MS when the caller states no wait', async () => {
    stack.simulator.controls.setFaults({ latencyMs: 600 });
    const answer = await cnam(stack, '+442079460005', { authorization: basicOf('ops') });
    stack.simulator.controls.setFaults({ latencyMs: 0 });
    expect([answer.status, answer.name, answer.result]).toEqual([200, 'Unknown caller', 'deadline']);
    expect(answer.ms).toBeLessThan(550);
    expect(answer.headers.get('preference-applied')).toBeNull();
  });

  it('answers rate-limited past the client rate, still 200 with the fallback', async () => {
    await awayFromMinuteEnd();
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await cnam(stack, 'anonymous', { authorization: basicOf('crm') }));
    expect(answers.map((a) => a.result)).toEqual([
      'not-a-number',
      'not-a-number',
      'not-a-number',
      'not-a-number',
      'rate-limited',
    ]);
    expect(answers[4]!.status).toBe(200);
    expect(answers[4]!.headers.get('retry-after')).toMatch(/^\d+$/);
  });
});

describe('HTTP Basic and the failed-login throttle', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ env: { LOGIN_FAILURES_PER_CLIENT: '2' } });
  });
  afterAll(() => stack.close());

  it('refuses with 429 after too many wrong secrets, even the right one, and counts with POST /token/login', async () => {
    const wrong = basicAuth('pbx', 'wrong-secret');
    expect((await cnam(stack, '+442079460002', { authorization: wrong })).status).toBe(401);
    expect((await cnam(stack, '+442079460002', { authorization: wrong })).status).toBe(401);
    const throttled = await cnam(stack, '+442079460002', { authorization: basicOf('pbx') });
    expect([throttled.status, throttled.name, throttled.result]).toEqual([429, '', 'auth-throttled']);
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);
    // The same budget as the login form: pbx cannot log in from this address either.
    const login = await fetch(`${stack.gateway.url}/token/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'pbx', client_secret: CLIENTS.pbx }),
    });
    expect(login.status).toBe(429);
    // Another client from the same address is not locked out by pbx's failures.
    expect((await cnam(stack, '+442079460002', { authorization: basicOf('crm') })).result).toBe('listed');
    expect(stack.simulator.controls.stats().searchCalls).toBe(1);
  });
});
