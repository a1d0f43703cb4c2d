// The operators' kit proven against Prometheus's own server: two gateway replicas on loopback are scraped on
// their metrics listeners every second, traffic makes hits, misses, errors and 429s, then every PromQL
// expression of the Grafana dashboard and of config/prometheus/alerts.yml is evaluated through Prometheus's
// HTTP API.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkRequirement, fileRequirement } from '../helpers/requires.js';
import { PROMETHEUS_BIN, startPrometheus, type PromSample, type RunningPrometheus } from '../helpers/prometheus.js';
import { startReplicas, type Replicas } from '../helpers/replicas.js';
import { ALERTS_FILE, dashboardTargets, readAlertRules, substituteGrafanaVariables } from './ops-kit-files.js';

const hasPrometheus = checkRequirement(fileRequirement(PROMETHEUS_BIN, 'prometheus (Debian package prometheus)'));
const JOB = 'callerid-gateway';

const finite = (s: PromSample) => Number.isFinite(Number(s.value[1]));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!hasPrometheus)('dashboard and alert rules against a real Prometheus scraping two replicas', () => {
  let stack: Replicas;
  let prometheus: RunningPrometheus;
  let answered = 0;

  beforeAll(async () => {
    stack = await startReplicas(2, {
      env: {
        CLIENT_RATE_PER_MINUTE: '30',
        CLIENT_UPSTREAM_QUOTAS: 'pbx:2',
        UPSTREAM_BUDGET_PER_DAY: '1000',
        CONSOLE_PROVIDER: 'swissdir',
        CONSOLE_RATE_PER_ADDRESS: '2',
        UPSTREAM_BREAKER_FAILURES: '50',
      },
      // Scraped on their metrics listeners, as config/prometheus/prometheus.yml does.
      metricsPorts: true,
    });
    prometheus = await startPrometheus({
      job: JOB,
      targets: stack.replicas.map((r) => `127.0.0.1:${r.gateway.metricsServer!.port}`),
      ruleFiles: [ALERTS_FILE],
    });
    // Both targets scraped once before the traffic, so every counter has a sample from before it.
    await prometheus.scraped();

    const [one, two] = stack.replicas as [Replicas['replicas'][0], Replicas['replicas'][0]];
    const send = async (res: Promise<Response>, status: number) => {
      const r = await res;
      await r.arrayBuffer();
      answered++;
      expect(r.status).toBe(status);
    };
    const crm1 = await one.login('crm');
    const crm2 = await two.login('crm');
    const pbx2 = await two.login('pbx');
    // crm on replica one ends each round over its rate, so replica one's other traffic of round two is ops's.
    const ops1 = await one.login('ops');
    answered += 4;
    // Two rounds with scrapes between them: a series a request creates (a first 429, say) only shows a rate
    // once Prometheus has seen it grow, as in any real traffic.
    for (const round of [1, 2]) {
      const first = round === 1 ? crm1 : ops1;
      // Misses (first round), then hits, on both replicas.
      for (const what of ['020 7946 0001', '020 7946 0002', '020 7946 0003']) {
        await send(one.search(what, first), 200);
        await send(one.search(what, first), 200);
        await send(two.search(what, crm2), 200);
      }
      // 400 (not a number), 401 (no token).
      await send(one.search('12', first), 400);
      await send(fetch(`${one.gateway.url}/v2/contacts/search?what=02079460001`), 401);
      // 502: the upstream fails a miss.
      stack.simulator.controls.setFaults({ errorRate: 1 });
      await send(two.search(`020 7946 099${round}`, crm2), 502);
      stack.simulator.controls.setFaults({ errorRate: 0 });
      // 429 quota-exhausted: pbx may cause two upstream calls a day.
      if (round === 1) {
        await send(two.search('0161 496 0001', pbx2), 200);
        await send(two.search('0161 496 0002', pbx2), 200);
      }
      await send(two.search(`0161 496 000${2 + round}`, pbx2), 429);
      // 429 too-many-requests: crm over 30 searches a clock minute on replica one (hits); room for a minute that
      // turns over meanwhile and starts the count again.
      let limited = false;
      for (let i = 0; i < 70 && !limited; i++) {
        const r = await one.search('020 7946 0001', crm1);
        await r.arrayBuffer();
        answered++;
        limited = r.status === 429;
      }
      expect(limited).toBe(true);
      // The console: two searches per address and window, then 429 (the console's own limits, a search refused at
      // its rate step as any caller's is).
      let consoleLimited = false;
      for (let i = 0; i < 4 && !consoleLimited; i++) {
        const r = await fetch(
          `${one.gateway.url}/console/v2/contacts/search?what=${encodeURIComponent('020 7946 0002')}`,
        );
        await r.arrayBuffer();
        answered++;
        if (round === 1 && i < 2) expect(r.status).toBe(200);
        consoleLimited = r.status === 429;
      }
      expect(consoleLimited).toBe(true);
      if (round === 1) await sleep(2_500);
    }

    // Prometheus has scraped everything sent (each replica counts its own answers).
    await waitFor(
      async () =>
        Number(
          (await prometheus.query(`sum(callerid_gateway_http_requests_total{job="${JOB}"})`)).data?.result[0]?.value[1],
        ) >= answered,
    );
    // And once more, so every series has two samples after its last change (rate() needs two).
    await sleep(2_500);
  }, 90_000);

  afterAll(async () => {
    await prometheus?.close();
    await stack?.close();
  });

  it('parses every panel query of the dashboard and returns data for each, with a number in it', async () => {
    const targets = dashboardTargets();
    expect(targets.length).toBeGreaterThan(25);
    const empty: string[] = [];
    for (const t of targets) {
      const expr = substituteGrafanaVariables(t.expr);
      const answer = await prometheus.query(expr);
      expect(answer.error ?? 'parsed', `${t.panel} ${t.refId}: ${expr}`).toBe('parsed');
      expect(answer.status).toBe('success');
      const result = answer.data!.result;
      if (result.length === 0 || !result.some(finite)) empty.push(`${t.panel} ${t.refId}: ${expr}`);
    }
    expect(empty).toEqual([]);
  });

  it('shows the traffic it was sent: hits and misses, 400/401/429/502 by route, quota and rate-limit rejections', async () => {
    const values = async (panelExpr: string) => {
      const target = dashboardTargets().find((t) => t.expr === panelExpr || t.expr.startsWith(panelExpr));
      if (!target) throw new Error(`no dashboard query starting ${panelExpr}`);
      return (await prometheus.query(substituteGrafanaVariables(target.expr))).data!.result;
    };
    const statuses = (await values('sum by (route, status) (rate(callerid_gateway_http_requests_total'))
      .filter((s) => Number(s.value[1]) > 0)
      .map((s) => `${s.metric.route} ${s.metric.status}`);
    for (const expected of [
      '/v2/contacts/search 400',
      '/v2/contacts/search 401',
      '/v2/contacts/search 429',
      '/v2/contacts/search 502',
      '/console/v2/contacts/search 429',
    ]) {
      expect(statuses).toContain(expected);
    }
    const results = Object.fromEntries(
      (await values('sum by (result) (rate(callerid_gateway_cache_lookups_total')).map((s) => [
        s.metric.result,
        Number(s.value[1]),
      ]),
    );
    expect(results.hit).toBeGreaterThan(0);
    expect(results.miss).toBeGreaterThan(0);
    const ratio = Number(
      (
        await values(
          'sum(rate(callerid_gateway_cache_lookups_total{instance=~"$instance",result=~"hit|stale|stale_if_error|shared"}',
        )
      )[0]!.value[1],
    );
    expect(ratio).toBeGreaterThan(0.3);
    expect(ratio).toBeLessThan(1);
    const quota = (await values('sum by (client, scope) (rate(callerid_gateway_quota_rejections_total')).map(
      (s) => `${s.metric.client} ${s.metric.scope}`,
    );
    expect(quota).toContain('pbx quota');
    const limited = (
      await values(
        'sum by (client) (rate(callerid_gateway_client_searches_total{instance=~"$instance",result="rate_limited"}',
      )
    )
      .filter((s) => Number(s.value[1]) > 0)
      .map((s) => s.metric.client);
    // A client over its rate, and the console over its own limits: both searches refused at the rate step.
    expect(limited.sort()).toEqual(['console', 'crm']);
    const expiry = (await values('min by (instance) (callerid_gateway_upstream_token_expiry_timestamp_seconds')).map(
      (s) => Number(s.value[1]),
    );
    expect(expiry).toHaveLength(2);
    for (const seconds of expiry) expect(seconds).toBeGreaterThan(80_000);
  });

  it('parses every alert rule expression, and Prometheus loads and evaluates all of them without error', async () => {
    const rules = readAlertRules();
    expect(rules.length).toBe(11);
    for (const rule of rules) {
      const answer = await prometheus.query(rule.expr);
      expect(answer.error ?? 'parsed', `${rule.alert}: ${rule.expr}`).toBe('parsed');
    }
    type RuleState = { name: string; health: string; lastError?: string; lastEvaluation: string };
    let loaded: RuleState[] = [];
    await waitFor(async () => {
      const answer = await prometheus.api<{ data: { groups: { rules: RuleState[] }[] } }>('/api/v1/rules');
      loaded = answer.data.groups.flatMap((g) => g.rules);
      return loaded.length === rules.length && loaded.every((r) => !r.lastEvaluation.startsWith('0001'));
    });
    expect(loaded.map((r) => r.name).sort()).toEqual(rules.map((r) => r.alert).sort());
    for (const rule of loaded)
      expect(`${rule.name}: ${rule.health} ${rule.lastError ?? ''}`.trim()).toBe(`${rule.name}: ok`);
  });

  it('makes the quota alert pending for the caller whose quota the traffic spent, and nothing it did not cause', async () => {
    type Alert = { labels: Record<string, string>; state: string };
    let alerts: Alert[] = [];
    await waitFor(async () => {
      alerts = (await prometheus.api<{ data: { alerts: Alert[] } }>('/api/v1/alerts')).data.alerts;
      return alerts.some((a) => a.labels.alertname === 'CallerIdClientQuotaNearlySpent');
    });
    // pbx spent 2 of its 2 upstream calls (for: 5m, so pending, not yet firing).
    expect(
      alerts
        .filter((a) => a.labels.alertname === 'CallerIdClientQuotaNearlySpent')
        .map((a) => `${a.labels.client} ${a.state}`),
    ).toEqual(['pbx pending']);
    // The two 502s are failed upstream searches and 5xx answers; a minute of traffic with few hits is a low hit
    // ratio. Nothing else (no replica down, no token trouble, no store down, no breaker, no budget) may be raised.
    const caused = [
      'CallerIdClientQuotaNearlySpent',
      'CallerIdUpstreamErrorRate',
      'CallerIdServerErrorRate',
      'CallerIdCacheHitRatioLow',
    ];
    for (const a of alerts) expect(caused).toContain(a.labels.alertname);
  });
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(250);
  }
}
