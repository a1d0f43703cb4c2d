// The Worker's one /metrics under `wrangler dev` (real workerd, the metrics Durable Object on disk): exact request
// counts, promtool's linter, the dashboard's and alert rules' queries in a real Prometheus, and counts that a
// restart on the same state does not lower.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../../../src/auth/client-registry.js';
import { startSimulatorServer, type SimulatorServer } from '../../../../src/simulator/server.js';
import { PROMETHEUS_BIN, startPrometheus, type PromSample } from '../../../helpers/prometheus.js';
import { checkRequirement, fileRequirement } from '../../../helpers/requires.js';
import { loginAt } from '../../../helpers/stack.js';
import { startWranglerDev, wranglerPresent, type WranglerDev } from '../../../helpers/wrangler-dev.js';
import {
  ALERTS_FILE,
  dashboardTargets,
  readAlertRules,
  substituteGrafanaVariables,
} from '../../../ops/ops-kit-files.js';

const run = wranglerPresent();
const hasPromtool = checkRequirement(fileRequirement('/usr/bin/promtool', 'promtool (Debian package prometheus)'));
const hasPrometheus = checkRequirement(fileRequirement(PROMETHEUS_BIN, 'prometheus (Debian package prometheus)'));
const TOKEN = 'wrangler-metrics-token';
const SEARCH = '/v2/contacts/search';
/** Panels on Node's per-process families (docs/workers.md, "Metrics"): no data from the Worker by design. */
const NODE_ONLY = /process_|callerid_gateway_cache_(bytes|entries)/;

const counterLines = (text: string) =>
  new Map(
    text
      .split('\n')
      .filter((l) => /^callerid_gateway_\w+_total\{|^callerid_gateway_\w+_(count|bucket)\{/.test(l))
      .map((l) => [l.slice(0, l.lastIndexOf(' ')), Number(l.slice(l.lastIndexOf(' ') + 1))]),
  );
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!run)("the Worker's /metrics under wrangler dev", () => {
  let simulator: SimulatorServer;
  let worker: WranglerDev | undefined;
  let vars: Record<string, string>;
  const state = mkdtempSync(join(tmpdir(), 'callerid-wrangler-metrics-'));
  let searches = 0;
  let text = '';

  const scrape = async () => {
    const res = await fetch(`${worker!.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    return res.text();
  };
  const search = async (what: string, token: string) => {
    const res = await fetch(`${worker!.url}${SEARCH}?what=${encodeURIComponent(what)}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    await res.arrayBuffer();
    searches++;
    return res.status;
  };

  beforeAll(async () => {
    simulator = await startSimulatorServer({ clients: { 'worker-gw': 'worker-upstream-secret' } });
    vars = {
      UPSTREAM_AUTH_URL: simulator.url,
      UPSTREAM_BASE_URL: simulator.url,
      UPSTREAM_CLIENT_ID: 'worker-gw',
      UPSTREAM_CLIENT_SECRET: 'worker-upstream-secret',
      GATEWAY_TOKEN_SECRET: 'worker-test-signing-key-0123456789abcdef',
      PUBLIC_BASE_URL: 'https://callerid.example.com',
      GATEWAY_CLIENTS: `crm:${await sha256Hex('crm-secret')},pbx:${await sha256Hex('pbx-secret')},ops:${await sha256Hex('ops-secret')}`,
      // crm sends 14 searches in all; ops goes over this in each round (the dashboard's rate-limited panel).
      CLIENT_RATE_PER_MINUTE: '20',
      DEFAULT_REGION: 'GB',
      CLIENT_UPSTREAM_QUOTAS: 'pbx:2',
      UPSTREAM_BUDGET_PER_DAY: '1000',
      CONSOLE_PROVIDER: 'swissdir',
      METRICS_TOKEN: TOKEN,
      METRICS_PUSH_INTERVAL_SECONDS: '1',
    };
    worker = await startWranglerDev(vars, { persistTo: state });
  }, 120_000);

  afterAll(async () => {
    worker?.close();
    await worker?.exited;
    await simulator?.close();
    rmSync(state, { recursive: true, force: true });
  });

  it('refuses a scrape without METRICS_TOKEN with 401 problem+json', async () => {
    const res = await fetch(`${worker!.url}/metrics`);
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
  });

  it('counts every search exactly once, and passes promtool check metrics', async () => {
    const crm = await loginAt(worker!.url, 'crm', 'crm-secret');
    const pbx = await loginAt(worker!.url, 'pbx', 'pbx-secret');
    const statuses: number[] = [];
    for (const what of ['020 7946 0001', '020 7946 0002', '020 7946 0001', '020 7946 0002', '12'])
      statuses.push(await search(what, crm));
    for (const what of ['0161 496 0001', '0161 496 0002', '0161 496 0003']) statuses.push(await search(what, pbx));
    expect(statuses).toEqual([200, 200, 200, 200, 400, 200, 200, 429]);
    text = await scrape();
    const sum = [...counterLines(text)]
      .filter(([k]) => k.startsWith(`callerid_gateway_http_requests_total{route="${SEARCH}"`))
      .reduce((a, [, v]) => a + v, 0);
    expect(sum).toBe(searches);
    expect(text).toMatch(/^callerid_gateway_client_searches_total\{client="pbx",result="quota_exhausted"\} 1$/m);
    expect(text).toMatch(/^callerid_gateway_quota_rejections_total\{client="pbx",scope="quota"\} 1$/m);
    expect(text).toMatch(/^callerid_gateway_client_upstream_quota_used\{client="pbx"\} 2$/m);
    expect(text).not.toMatch(/^callerid_gateway_cache_bytes/m);
    if (hasPromtool) {
      const lint = spawnSync('/usr/bin/promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
      expect(lint.stdout + lint.stderr).toBe('');
      expect(lint.status).toBe(0);
    }
  });

  it.skipIf(!hasPrometheus)(
    "a real Prometheus scrapes it and evaluates every query of config/'s dashboard and alert rules",
    async () => {
      const prometheus = await startPrometheus({
        job: 'callerid-gateway',
        targets: [new URL(worker!.url).host],
        ruleFiles: [ALERTS_FILE],
        bearerToken: TOKEN,
      });
      try {
        const crm = await loginAt(worker!.url, 'crm', 'crm-secret');
        const ops = await loginAt(worker!.url, 'ops', 'ops-secret');
        // Scraped once before the traffic, so every counter has a sample from before it.
        await prometheus.scraped();
        // Traffic across several scrapes, so rate() has two samples of every series it grows.
        for (let round = 0; round < 3; round++) {
          await search('020 7946 0001', crm);
          await search(`020 7946 00${10 + round}`, crm);
          simulator.controls.setFaults({ errorRate: 1 });
          expect(await search(`020 7946 09${10 + round}`, crm)).toBe(502);
          simulator.controls.setFaults({ errorRate: 0 });
          let limited = false;
          for (let i = 0; i < 45 && !limited; i++) limited = (await search('020 7946 0001', ops)) === 429;
          expect(limited).toBe(true);
          await sleep(2_500);
        }
        const empty: string[] = [];
        const targets = dashboardTargets();
        expect(targets.length).toBeGreaterThan(25);
        for (const t of targets) {
          const expr = substituteGrafanaVariables(t.expr);
          const answer = await prometheus.query(expr);
          expect(answer.error ?? 'parsed', `${t.panel}: ${expr}`).toBe('parsed');
          const finite = (answer.data?.result ?? []).some((s: PromSample) => Number.isFinite(Number(s.value[1])));
          if (!finite) empty.push(expr);
        }
        // Every panel has data but those on Node's per-process families.
        expect(empty.filter((e) => !NODE_ONLY.test(e))).toEqual([]);
        expect(empty.length).toBeGreaterThan(0);
        const rules = readAlertRules();
        for (const rule of rules) {
          const answer = await prometheus.query(rule.expr);
          expect(answer.error ?? 'parsed', `${rule.alert}`).toBe('parsed');
        }
        type RuleState = { name: string; health: string; lastEvaluation: string };
        let loaded: RuleState[] = [];
        for (let i = 0; i < 40; i++) {
          const answer = await prometheus.api<{ data: { groups: { rules: RuleState[] }[] } }>('/api/v1/rules');
          loaded = answer.data.groups.flatMap((g) => g.rules);
          if (loaded.length === rules.length && loaded.every((r) => !r.lastEvaluation.startsWith('0001'))) break;
          await sleep(250);
        }
        expect(loaded.map((r) => `${r.name} ${r.health}`).sort()).toEqual(rules.map((r) => `${r.alert} ok`).sort());
      } finally {
        await prometheus.close();
      }
    },
    90_000,
  );

  it('lowers no counter when wrangler dev restarts on the same persisted state', async () => {
    const before = counterLines(await scrape());
    worker!.close();
    await worker!.exited;
    worker = await startWranglerDev(vars, { persistTo: state });
    const after = counterLines(await scrape());
    const lowered = [...before].filter(([k, v]) => (after.get(k) ?? -1) < v).map(([k]) => k);
    expect(lowered).toEqual([]);
    expect(before.size).toBeGreaterThan(10);
  }, 120_000);
});
