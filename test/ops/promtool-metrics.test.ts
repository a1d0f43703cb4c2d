// /metrics of a running gateway, after traffic of every kind, passes Prometheus's own linter
// (`promtool check metrics`), and answers given before any route ran carry the route they were for.
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleSearch } from '../helpers/console-client.js';
import { checkRequirement, fileRequirement } from '../helpers/requires.js';
import { startStack, type Stack } from '../helpers/stack.js';

const hasPromtool = checkRequirement(fileRequirement('/usr/bin/promtool', 'promtool (Debian package prometheus)'));

describe('/metrics and Prometheus naming', () => {
  let stack: Stack;
  let text: string;
  beforeAll(async () => {
    stack = await startStack({ env: { CONSOLE_PROVIDER: 'swissdir', CONSOLE_RATE_PER_ADDRESS: '1' } });
    const token = await stack.login();
    await stack.search('020 7946 0001', token);
    await stack.search('020 7946 0001', token);
    await stack.search('not a number', token);
    await consoleSearch(stack.gateway.url, '020 7946 0001');
    await consoleSearch(stack.gateway.url, '020 7946 0001'); // 429: over the per-address limit
    await fetch(`${stack.gateway.url}/token/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'x'.repeat(10_000), // 413 from the body limit, before the route
    });
    await fetch(`${stack.gateway.url}/no/such/path`);
    text = await (await fetch(`${stack.gateway.url}/metrics`)).text();
  });
  afterAll(async () => {
    await stack.close();
  });

  it.skipIf(!hasPromtool)('passes promtool check metrics', () => {
    const run = spawnSync('/usr/bin/promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(run.stdout + run.stderr).toBe('');
    expect(run.status).toBe(0);
  });

  it('labels a console 429 and a login 413 with their routes, and only an unknown path as unmatched', () => {
    expect(text).toMatch(/http_requests_total\{route="\/console\/v2\/contacts\/search",method="GET",status="429"\} 1/);
    expect(text).toMatch(/http_requests_total\{route="\/token\/login",method="POST",status="413"\} 1/);
    expect(text).toMatch(/http_requests_total\{route="unmatched",method="GET",status="404"\} 1/);
    expect(text).not.toContain('route="/console/*"');
  });

  it('exports points in time as timestamps and counts nothing twice', () => {
    expect(text).toMatch(/^callerid_gateway_upstream_token_expiry_timestamp_seconds \d{10}/m);
    expect(text).toMatch(/^callerid_gateway_upstream_cooldown_end_timestamp_seconds 0$/m);
    expect(text).toMatch(/^callerid_gateway_upstream_in_flight 0$/m);
    expect(text).toMatch(/^callerid_gateway_upstream_queued 0$/m);
    expect(text).not.toContain('rate_limit_rejections_total');
    expect(text).toMatch(/^nodejs_active_handles\{/m);
    expect(text).not.toMatch(/^nodejs_active_\w+_total/m);
  });
});
