// Operations over real sockets: /metrics after traffic (promtool, counters), private logs and metrics,
// health and readiness, the metrics token and the separate metrics port.
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { checkRequirement, fileRequirement } from '../helpers/requires.js';
import { parseConfig } from '../../src/config/config.js';
import { CLIENTS, startStack, type Stack } from '../helpers/stack.js';

const LISTED = '+442079460001';
const OTHER = '+442079460002';
const UNLISTED = '+442079460999';
const DESKTOP = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36';

const PROMTOOL = '/usr/bin/promtool';
const hasPromtool = checkRequirement(fileRequirement(PROMTOOL, 'promtool (Debian package prometheus)'));

/** prom-client's default metrics include three gauges whose names end in _total, which promtool's lint flags. */
const PROM_CLIENT_DEFAULT_REMARK =
  /^nodejs_active_(handles|requests|resources)_total non-counter metrics should not have "_total" suffix$/;

function promtool(input: string): { status: number | null; remarks: string[] } {
  const run = spawnSync(PROMTOOL, ['check', 'metrics'], { input, encoding: 'utf8' });
  const remarks = `${run.stdout}\n${run.stderr}`
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return { status: run.status, remarks };
}

/** The value of one series, matched by name and a subset of its labels; undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = new Map([...(m[3] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1]!, l[2]!]));
    if (Object.entries(labels).every(([k, v]) => have.get(k) === v)) return Number(m[4]);
  }
  return undefined;
}

async function metricsText(stack: Stack, init?: RequestInit): Promise<string> {
  const res = await fetch(`${stack.gateway.url}/metrics`, init);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.text();
}

function consoleSearch(stack: Stack, what: string): Promise<Response> {
  return fetch(`${stack.gateway.url}/console/v2/contacts/search?what=${encodeURIComponent(what)}`, {
    headers: { 'user-agent': DESKTOP },
  });
}

async function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('metrics after traffic', () => {
  let stack: Stack;
  let now = Date.now();
  beforeAll(async () => {
    stack = await startStack({
      env: {
        CACHE_TTL_SECONDS: '60',
        CACHE_STALE_WHILE_REVALIDATE_SECONDS: '300',
        CONSOLE_PROVIDER: 'swissdir',
        CONSOLE_RATE_PER_ADDRESS: '1',
      },
      gateway: { clock: () => now },
    });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('counts a miss, a hit, a stale answer, a 401 refresh and a 429 by their labels', async () => {
    const token = await stack.login();
    expect((await stack.search(LISTED, token)).headers.get('cache-status')).toMatch(/fwd=miss/);
    expect((await stack.search(LISTED, token)).headers.get('cache-status')).toMatch(/; hit/);
    now += 61_000;
    expect((await stack.search(LISTED, token)).headers.get('cache-status')).toMatch(/fwd=stale/);
    // The stale answer's revalidation runs in the background; let it finish before the token is revoked.
    await until(() => stack.simulator.controls.stats().searchCalls === 2);

    stack.simulator.controls.revokeAllTokens();
    expect((await stack.search(OTHER, token)).status).toBe(200);

    expect((await consoleSearch(stack, UNLISTED)).status).toBe(200);
    expect((await consoleSearch(stack, UNLISTED)).status).toBe(429);

    const text = await metricsText(stack);
    expect(sample(text, 'callerid_gateway_cache_lookups_total', { result: 'miss' })).toBeGreaterThanOrEqual(2);
    expect(sample(text, 'callerid_gateway_cache_lookups_total', { result: 'hit' })).toBe(1);
    expect(sample(text, 'callerid_gateway_cache_lookups_total', { result: 'stale' })).toBe(1);
    expect(sample(text, 'callerid_gateway_cache_entries')).toBeGreaterThanOrEqual(2);
    expect(sample(text, 'callerid_gateway_cache_bytes')).toBeGreaterThan(0);
    expect(
      sample(text, 'callerid_gateway_upstream_requests_total', { endpoint: 'search', outcome: 'unauthorized' }),
    ).toBe(1);
    expect(
      sample(text, 'callerid_gateway_upstream_requests_total', { endpoint: 'search', outcome: 'ok' }),
    ).toBeGreaterThanOrEqual(3);
    expect(sample(text, 'callerid_gateway_upstream_requests_total', { endpoint: 'token', outcome: 'ok' })).toBe(2);
    expect(
      sample(text, 'callerid_gateway_upstream_request_duration_seconds_count', { endpoint: 'search' }),
    ).toBeGreaterThanOrEqual(4);
    expect(sample(text, 'callerid_gateway_upstream_token_unauthorized_refreshes_total')).toBe(1);
    expect(
      sample(text, 'callerid_gateway_upstream_token_refreshes_total', { result: 'ok', reason: 'unauthorized' }),
    ).toBe(1);
    expect(sample(text, 'callerid_gateway_upstream_token_refreshes_total', { result: 'ok', reason: 'cold' })).toBe(1);
    expect(
      sample(text, 'callerid_gateway_upstream_token_expiry_timestamp_seconds')! - Date.now() / 1000,
    ).toBeGreaterThan(80_000);
    expect(sample(text, 'callerid_gateway_console_refusals_total', { reason: 'rate_limited' })).toBe(1);
    expect(
      sample(text, 'callerid_gateway_http_requests_total', {
        route: '/v2/contacts/search',
        method: 'GET',
        status: '200',
      }),
    ).toBe(4);
    expect(
      sample(text, 'callerid_gateway_http_requests_total', { route: '/token/login', method: 'POST', status: '200' }),
    ).toBe(1);
    expect(text).toMatch(/callerid_gateway_http_requests_total\{route="\/console[^"]*",method="GET",status="429"\} 1/);
    expect(
      sample(text, 'callerid_gateway_http_request_duration_seconds_count', {
        route: '/v2/contacts/search',
        status: '200',
      }),
    ).toBe(4);
    expect(sample(text, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
  });

  it('labels requests no route matched as "unmatched", whatever their path or method', async () => {
    await fetch(`${stack.gateway.url}/no/such/+442079460001`);
    await fetch(`${stack.gateway.url}/v2/contacts/search`, { method: 'DELETE' });
    const text = await metricsText(stack);
    expect(
      sample(text, 'callerid_gateway_http_requests_total', { route: 'unmatched', method: 'GET', status: '404' }),
    ).toBe(1);
    expect(
      sample(text, 'callerid_gateway_http_requests_total', { route: 'unmatched', method: 'DELETE', status: '405' }),
    ).toBe(1);
    expect(text).not.toContain('/no/such');
  });

  it.skipIf(!hasPromtool)('passes promtool check metrics', async () => {
    const text = await metricsText(stack);
    // The gateway's own families: parsed and linted without a single remark.
    const own = text
      .split('\n')
      .filter((l) => /^(# (HELP|TYPE) )?callerid_gateway_/.test(l))
      .join('\n');
    expect(own).toContain('callerid_gateway_http_request_duration_seconds_bucket');
    expect(promtool(`${own}\n`)).toEqual({ status: 0, remarks: [] });
    // The whole scrape parses; the only remarks allowed are prom-client's own default gauges named *_total.
    const all = promtool(text);
    expect(all.remarks.filter((r) => !PROM_CLIENT_DEFAULT_REMARK.test(r))).toEqual([]);
  });

  it('writes one JSON line per request with route template, status, duration, cache result, request id and client id', async () => {
    const token = await stack.login('pbx');
    const res = await stack.search(LISTED, token, { headers: { 'x-request-id': 'req-ops-1' } });
    expect(res.status).toBe(200);
    const line = stack.logs.find((l) => l.fields.event === 'request' && l.fields.requestId === 'req-ops-1');
    expect(line).toMatchObject({
      level: 'info',
      msg: 'request',
      fields: {
        method: 'GET',
        route: '/v2/contacts/search',
        status: 200,
        clientId: 'pbx',
        cache: expect.stringMatching(/^(hit|stale|miss)$/),
      },
    });
    expect(line!.fields.durationMs).toEqual(expect.any(Number));
    expect(JSON.stringify(line)).not.toContain('what=');
  });
});

describe('privacy of logs and metrics', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      env: { CONSOLE_PROVIDER: 'swissdir', CONSOLE_RATE_PER_ADDRESS: '100', LOG_HASH_KEY: 'ops-test-log-hash-key' },
    });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('never shows a digit run of a searched number, a secret or a token', async () => {
    const numbers = {
      '2079460001': ['+44 20 7946 0001', '020 7946 0001', '0044 20 7946 0001', '(020) 7946-0001', '+442079460001'],
      '2079460999': ['+44 20 7946 0999', '020 7946 0999', '0044 (0)20 7946 0999'],
    };
    const token = await stack.login();
    stack.simulator.controls.setFaults({ errorRate: 0 });
    for (const spellings of Object.values(numbers)) {
      for (const what of spellings) {
        await stack.search(what, token);
        await consoleSearch(stack, what);
      }
    }
    // A failing upstream and a 401 refresh log too: they must not carry the number either.
    stack.simulator.controls.revokeAllTokens();
    stack.simulator.controls.setFaults({ errorRate: 1 });
    await stack.search('020 7946 0003', token);
    stack.simulator.controls.setFaults({ errorRate: 0 });
    await new Promise((r) => setTimeout(r, 50));

    const metrics = await metricsText(stack);
    const logs = stack.logs.map((l) => JSON.stringify(l)).join('\n');
    expect(stack.logs.filter((l) => l.fields.event === 'request').length).toBeGreaterThanOrEqual(16);

    const digitRuns = [...Object.keys(numbers), '2079460003'].flatMap((n) => {
      const runs: string[] = [];
      for (let i = 0; i + 7 <= n.length; i++) runs.push(n.slice(i, i + 7));
      return runs;
    });
    const upstreamTokens = stack.simulator.controls.stats().authorizationsSeen.map((h) => h.replace(/^Bearer\s+/i, ''));
    expect(upstreamTokens.length).toBeGreaterThan(0);
    const secrets = [
      ...Object.values(CLIENTS),
      'upstream-secret-xyz',
      'test-signing-key-of-at-least-32-bytes!',
      'ops-test-log-hash-key',
      token,
      ...upstreamTokens,
    ];
    // The series' names and labels, not their sample values: a value (a heap size, a sum of seconds) may hold any
    // seven digits by chance, and a value is never a number's.
    const series = metrics
      .split('\n')
      .map((line) => (line.startsWith('#') ? line : line.replace(/ \S+( \d+)?$/, '')))
      .join('\n');
    for (const [where, text] of [
      ['metrics', series],
      ['logs', logs],
    ] as const) {
      for (const run of digitRuns) expect(text.includes(run), `${where} contains the digit run ${run}`).toBe(false);
      for (const secret of secrets) expect(text.includes(secret), `${where} contains a secret or token`).toBe(false);
    }
  });
});

describe('health endpoints', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('answers /healthz 200 and /readyz 503 with the reason while the token endpoint fails, then 200 once it recovers', async () => {
    const { controls } = stack.simulator;
    controls.setFaults({ tokenErrorRate: 1 });
    controls.resetStats();

    const healthz = await fetch(`${stack.gateway.url}/healthz`);
    expect(healthz.status).toBe(200);
    expect(await healthz.json()).toEqual({ status: 'ok' });

    let probes = 0;
    for (; probes < 20; probes++) {
      const res = await fetch(`${stack.gateway.url}/readyz`);
      expect(res.status).toBe(503);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const body = (await res.json()) as { detail: string; requestId: string };
      expect(body.detail).toMatch(/not ready: no upstream token \(token endpoint answered 500\)/);
      expect(body.requestId).toEqual(expect.any(String));
      await new Promise((r) => setTimeout(r, 25));
    }
    // The token manager's back-off holds: twenty probes did not make twenty token requests.
    expect(controls.stats().tokenCalls).toBeGreaterThan(0);
    expect(controls.stats().tokenCalls).toBeLessThan(probes / 2);
    expect((await fetch(`${stack.gateway.url}/healthz`)).status).toBe(200);

    controls.setFaults({ tokenErrorRate: 0 });
    const deadline = Date.now() + 15_000;
    let status = 0;
    while (Date.now() < deadline) {
      status = (await fetch(`${stack.gateway.url}/readyz`)).status;
      if (status === 200) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(200);
    expect(await (await fetch(`${stack.gateway.url}/readyz`)).json()).toEqual({ status: 'ready' });
  });
});

describe('metrics protection', () => {
  /** A search by `crm`, so the registry holds series labelled with that client id. */
  async function searchAsCrm(stack: Stack): Promise<void> {
    expect((await stack.search(LISTED, await stack.login('crm'))).status).toBe(200);
  }

  it('serves /metrics on its own port by default (9464), away from the API port', () => {
    expect(parseConfig({}).metrics).toEqual({ port: 9464, host: '127.0.0.1', token: undefined });
  });

  it('does not show client ids to an anonymous caller of the API port when METRICS_PORT is set (the default)', async () => {
    const port = await freePort();
    const stack = await startStack({ env: { METRICS_PORT: String(port) } });
    try {
      await searchAsCrm(stack);
      const api = await fetch(`${stack.gateway.url}/metrics`);
      expect(api.status).toBe(404);
      expect(await api.text()).not.toContain('crm');
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).toContain('callerid_gateway_http_requests_total{route="unmatched",method="GET",status="404"} 1');
      expect(text).toMatch(/\{client="crm"/);
      expect((await fetch(`http://127.0.0.1:${port}/v2/contacts/search`)).status).toBe(404);
      const start = stack.logs.find((l) => l.fields.event === 'start')?.fields;
      expect(start?.metricsPort).toBe(port);
      // The start line names the API reference too, beside the ports.
      expect(start?.docs).toBe(`${stack.gateway.url}/docs`);
      expect(stack.logs.some((l) => l.fields.event === 'metrics_open')).toBe(false);
    } finally {
      await stack.close();
    }
  });

  it('with METRICS_TOKEN also answers on the API port, to that bearer token only; the metrics port asks it too', async () => {
    const port = await freePort();
    const token = 'scrape-token-0123456789';
    const stack = await startStack({ env: { METRICS_TOKEN: token, METRICS_PORT: String(port) } });
    try {
      await searchAsCrm(stack);
      const anonymous = await fetch(`${stack.gateway.url}/metrics`);
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(await anonymous.text()).not.toContain('crm');
      expect((await fetch(`${stack.gateway.url}/metrics`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(
        401,
      );
      const text = await metricsText(stack, { headers: { authorization: `Bearer ${token}` } });
      expect(text).toContain('callerid_gateway_http_requests_total');
      expect(text).toMatch(/\{client="crm"/);
      expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(401);
      const own = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${token}` } });
      expect(own.status).toBe(200);
    } finally {
      await stack.close();
    }
  });

  it('with METRICS_PORT=0 and no token serves /metrics beside the API, as chosen, and warns at start', async () => {
    const stack = await startStack({ env: { METRICS_PORT: '0' } });
    try {
      await searchAsCrm(stack);
      expect(await metricsText(stack)).toMatch(/\{client="crm"/);
      const warning = stack.logs.find((l) => l.fields.event === 'metrics_open');
      expect(warning).toMatchObject({ level: 'warn' });
      expect(warning?.msg).toMatch(/METRICS_TOKEN/);
    } finally {
      await stack.close();
    }
  });
});
