// The operators' kit in config/, checked by the real tools that read it: promtool (rules, rule unit tests,
// scrape config), a Compose implementation (`docker compose config`, else Debian's docker-compose) and the
// Compose Specification schema, kubernetes-models' schemas and types; plus what ties the files to the gateway
// (metric names it exports, the rules in the docs, the cache size the memory limit is computed from).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { parseConfig } from '../../src/config/config.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { createNodeMetrics } from '../../src/runtime/node/node-metrics.js';
import { typeCheckK8s, validateComposeSchema, validateK8sSchema, type K8sObject } from '../helpers/manifest-checks.js';
import { checkRequirement, fileRequirement, type Requirement } from '../helpers/requires.js';
import {
  ALERTS_FILE,
  ALERT_TESTS_FILE,
  CONFIG_DIR,
  dashboardTargets,
  readAlertRules,
  readDashboard,
  docsAlertRules,
} from './ops-kit-files.js';

const hasPromtool = checkRequirement(fileRequirement('/usr/bin/promtool', 'promtool (Debian package prometheus)'));

/** `docker compose` (the plugin) where it runs, else Debian's `docker-compose`; both implement `config`. */
function composeCommand(): { command: string[]; requirement: Requirement } {
  const missing =
    'a Compose implementation: the docker compose plugin, or docker-compose (Debian package docker-compose)';
  for (const command of [['docker', 'compose'], ['docker-compose']]) {
    const run = spawnSync(command[0]!, [...command.slice(1), 'version'], { encoding: 'utf8', timeout: 60_000 });
    if (run.status === 0) return { command, requirement: { present: true, missing } };
  }
  return { command: [], requirement: { present: false, missing } };
}
const compose = composeCommand();
const hasCompose = checkRequirement(compose.requirement);

const metricNames = async () => {
  const own = (await createMetrics({ registry: new Registry() }).registry.getMetricsAsJSON()).map((m) => m.name);
  const node = (await createNodeMetrics().registry.getMetricsAsJSON()).map((m) => m.name);
  return new Set([...own, ...node]);
};
/** Metric names a PromQL expression reads (histogram series by their base name). */
const namesIn = (expr: string) =>
  [...expr.matchAll(/\b((?:callerid_gateway|process|nodejs)_[a-z0-9_]+)/g)].map((m) =>
    m[1]!.replace(/_(bucket|sum|count)$/, ''),
  );

describe('Prometheus alert rules (config/prometheus/alerts.yml)', () => {
  it.skipIf(!hasPromtool)('pass promtool check rules', () => {
    const run = spawnSync('/usr/bin/promtool', ['check', 'rules', ALERTS_FILE], { encoding: 'utf8' });
    expect(run.stdout + run.stderr).toMatch(/SUCCESS: 11 rules found/);
    expect(run.status).toBe(0);
  });

  it.skipIf(!hasPromtool)('pass their unit tests (promtool test rules), which make every alert fire', () => {
    const run = spawnSync('/usr/bin/promtool', ['test', 'rules', ALERT_TESTS_FILE], {
      encoding: 'utf8',
      cwd: `${CONFIG_DIR}prometheus`,
    });
    expect(run.stdout + run.stderr).toMatch(/SUCCESS/);
    expect(run.status).toBe(0);
    const tests = parse(readFileSync(ALERT_TESTS_FILE, 'utf8')) as {
      tests: { alert_rule_test: { alertname: string; exp_alerts: unknown[] }[] }[];
    };
    const fired = new Set(
      tests.tests.flatMap((t) => t.alert_rule_test.filter((a) => a.exp_alerts.length > 0).map((a) => a.alertname)),
    );
    expect([...fired].sort()).toEqual(
      readAlertRules()
        .map((r) => r.alert)
        .sort(),
    );
  });

  it.skipIf(!hasPromtool)('are loaded by the scrape config, which promtool check config accepts', () => {
    const run = spawnSync('/usr/bin/promtool', ['check', 'config', `${CONFIG_DIR}prometheus/prometheus.yml`], {
      encoding: 'utf8',
    });
    expect(run.stdout + run.stderr).toMatch(/is valid prometheus config file syntax/);
    expect(run.stdout + run.stderr).toMatch(/SUCCESS: 11 rules found/);
    expect(run.status).toBe(0);
  });

  it('hold every rule the docs show, unchanged', () => {
    const file = new Map(readAlertRules().map((r) => [r.alert, r]));
    const readme = docsAlertRules();
    expect(readme.length).toBe(7);
    for (const rule of readme) {
      expect(file.get(rule.alert), rule.alert).toBeDefined();
      const mine = file.get(rule.alert)!;
      expect({ expr: mine.expr.trim(), for: mine.for, labels: mine.labels }).toEqual({
        expr: rule.expr.trim(),
        for: rule.for,
        labels: rule.labels,
      });
    }
  });

  it('read only metrics the gateway exports', async () => {
    const exported = await metricNames();
    const used = readAlertRules().flatMap((r) => namesIn(r.expr));
    expect(used.length).toBeGreaterThan(10);
    for (const name of used) expect(exported, name).toContain(name);
  });
});

describe('Grafana dashboard (config/grafana/callerid-gateway.json)', () => {
  it('has one query per panel at least, unique panel ids, the datasource variable, and only exported metrics', async () => {
    const dashboard = readDashboard();
    const panels = dashboard.panels.filter((p) => p.type !== 'row');
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of panels) expect(p.targets?.length ?? 0, p.title).toBeGreaterThan(0);
    expect(dashboard.templating.list.map((v) => v.name)).toEqual(['datasource', 'instance']);
    const exported = await metricNames();
    for (const t of dashboardTargets())
      for (const name of namesIn(t.expr)) expect(exported, `${t.panel}: ${name}`).toContain(name);
  });

  it('covers what the issue asks to see', () => {
    const exprs = dashboardTargets()
      .map((t) => t.expr)
      .join('\n');
    for (const metric of [
      'callerid_gateway_http_requests_total', // request rate and errors by route
      'callerid_gateway_http_request_duration_seconds_bucket', // latency percentiles
      'callerid_gateway_cache_lookups_total', // hit ratio and results
      'callerid_gateway_upstream_requests_total', // upstream calls and errors
      'callerid_gateway_upstream_request_duration_seconds_bucket', // upstream latency
      'callerid_gateway_upstream_token_expiry_timestamp_seconds', // token seconds to expiry
      'callerid_gateway_console_refusals_total', // console rate limit
      'callerid_gateway_quota_rejections_total', // quota rejections
      'callerid_gateway_client_searches_total', // usage per client
      'callerid_gateway_client_upstream_calls_total',
      'callerid_gateway_shared_store_up', // shared store state
    ]) {
      expect(exprs).toContain(metric);
    }
  });

  it('is what the compose file provisions into Grafana, from the Prometheus it runs', () => {
    const datasources = parse(readFileSync(`${CONFIG_DIR}grafana/provisioning/datasources/prometheus.yml`, 'utf8'));
    expect(datasources.datasources[0]).toMatchObject({ type: 'prometheus', url: 'http://prometheus:9090' });
    const providers = parse(readFileSync(`${CONFIG_DIR}grafana/provisioning/dashboards/callerid-gateway.yml`, 'utf8'));
    const composeFile = parse(readFileSync(`${CONFIG_DIR}compose.yaml`, 'utf8'));
    const mounts: string[] = composeFile.services.grafana.volumes;
    expect(mounts).toContain(
      `./grafana/callerid-gateway.json:${providers.providers[0].options.path}/callerid-gateway.json:ro`,
    );
  });
});

describe('compose file (config/compose.yaml)', () => {
  const file = `${CONFIG_DIR}compose.yaml`;
  const env = {
    ...process.env,
    GATEWAY_TOKEN_SECRET: 'compose-check-not-a-secret-0123456789abcdef',
    GATEWAY_CLIENTS: `crm:${'0'.repeat(64)}`,
  };

  it('validates against the Compose Specification JSON schema', () => {
    const doc = parse(readFileSync(file, 'utf8'), { merge: true });
    expect(validateComposeSchema(doc)).toEqual([]);
    // The check can fail: a misspelt service key is refused.
    expect(validateComposeSchema({ services: { gateway: { imag: 'x' } } }).length).toBeGreaterThan(0);
  });

  it.skipIf(!hasCompose)(
    `passes \`${compose.command.join(' ')} config\`: three replicas on Redis, every mounted file exists`,
    () => {
      const out = execFileSync(compose.command[0]!, [...compose.command.slice(1), '-f', file, 'config'], {
        env,
        encoding: 'utf8',
      });
      const resolved = parse(out);
      expect(Object.keys(resolved.services).sort()).toEqual(['gateway', 'grafana', 'prometheus', 'redis', 'simulator']);
      expect(resolved.services.gateway.deploy.replicas).toBe(3);
      expect(resolved.services.gateway.environment.REDIS_URL).toBe('redis://redis:6379');
      const sources = ['prometheus', 'grafana'].flatMap((s) =>
        (resolved.services[s].volumes as (string | { type: string; source: string })[])
          .map((v) =>
            typeof v === 'string' ? { type: v.startsWith('/') ? 'bind' : 'volume', source: v.split(':')[0]! } : v,
          )
          .filter((v) => v.type === 'bind')
          .map((v) => v.source),
      );
      expect(sources.length).toBe(4);
      for (const source of sources) expect(existsSync(source), source).toBe(true);
    },
  );

  it.skipIf(!hasCompose)('refuses to start without GATEWAY_TOKEN_SECRET, naming it', () => {
    const { GATEWAY_TOKEN_SECRET: _, ...without } = env;
    const run = spawnSync(compose.command[0]!, [...compose.command.slice(1), '-f', file, 'config'], {
      env: without,
      encoding: 'utf8',
    });
    expect(run.stdout + run.stderr).toMatch(/set GATEWAY_TOKEN_SECRET/);
  });
});

describe('the metrics port across the kit', () => {
  const defaultPort = parseConfig({}).metrics.port;
  const k8s = readdirSync(`${CONFIG_DIR}k8s/`)
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) => parseAllDocuments(readFileSync(`${CONFIG_DIR}k8s/${f}`, 'utf8')).map((d) => d.toJS()));
  const kind = (k: string) => k8s.find((o) => o.kind === k);

  it('is the one Prometheus scrapes, the gateways listen on, and no published or Service port', () => {
    expect(defaultPort).toBeGreaterThan(0);
    const scrape = parse(readFileSync(`${CONFIG_DIR}prometheus/prometheus.yml`, 'utf8'));
    expect(scrape.scrape_configs[0].dns_sd_configs[0].port).toBe(defaultPort);

    const gateway = parse(readFileSync(`${CONFIG_DIR}compose.yaml`, 'utf8'), { merge: true }).services.gateway;
    expect(Number(gateway.environment.METRICS_PORT)).toBe(defaultPort);
    for (const published of gateway.ports as string[]) expect(published).not.toContain(String(defaultPort));

    const pod = kind('Deployment').spec.template;
    expect(Number(pod.metadata.annotations['prometheus.io/port'])).toBe(defaultPort);
    const ports = pod.spec.containers[0].ports as { name: string; containerPort: number }[];
    expect(ports.find((p) => p.name === 'metrics')?.containerPort).toBe(defaultPort);
    expect(Number(kind('ConfigMap').data.METRICS_PORT)).toBe(defaultPort);
    const servicePorts = kind('Service').spec.ports as { targetPort: string | number }[];
    expect(servicePorts.map((p) => p.targetPort)).not.toContain('metrics');
    expect(servicePorts.map((p) => p.targetPort)).not.toContain(defaultPort);

    const example = readFileSync(`${CONFIG_DIR}example.env`, 'utf8');
    expect(example).toMatch(new RegExp(`^METRICS_PORT=${defaultPort}$`, 'm'));
  });
});

describe('Kubernetes manifests (config/k8s/)', () => {
  const dir = `${CONFIG_DIR}k8s/`;
  const objects = readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) => parseAllDocuments(readFileSync(dir + f, 'utf8')).map((d) => d.toJS() as K8sObject));
  const byKind = (kind: string) => objects.find((o) => o.kind === kind) as K8sObject & Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- a parsed manifest

  it('are a Deployment, a Service, a PodDisruptionBudget and a ConfigMap, each valid by the Kubernetes 1.27 schema', async () => {
    expect(objects.map((o) => o.kind).sort()).toEqual(['ConfigMap', 'Deployment', 'PodDisruptionBudget', 'Service']);
    for (const o of objects) expect(await validateK8sSchema(o), o.kind).toBeNull();
    // The check can fail: a replica count that is not an integer is refused.
    const broken = structuredClone(byKind('Deployment'));
    broken.spec.replicas = 'three';
    expect(await validateK8sSchema(broken)).toMatch(/replicas must be integer/);
  });

  it("have no field the Kubernetes types do not know (TypeScript's excess-property check)", () => {
    const typo = structuredClone(byKind('Deployment'));
    typo.spec.template.spec.containers[0].readinesProbe = {};
    const [clean, misspelt] = typeCheckK8s(objects, [typo]);
    expect(clean).toEqual([]);
    expect(misspelt!.join('\n')).toMatch(/readinesProbe/);
  });

  it('probe /readyz and /healthz, select the same pods everywhere, take secrets from the Secret only', () => {
    const deployment = byKind('Deployment');
    const container = deployment.spec.template.spec.containers[0];
    expect(container.readinessProbe.httpGet.path).toBe('/readyz');
    expect(container.livenessProbe.httpGet.path).toBe('/healthz');
    const labels = deployment.spec.template.metadata.labels;
    expect(deployment.spec.selector.matchLabels).toEqual(labels);
    expect(byKind('Service').spec.selector).toEqual(labels);
    expect(byKind('PodDisruptionBudget').spec.selector.matchLabels).toEqual(labels);
    const secretNames = (container.env as { name: string; valueFrom?: { secretKeyRef?: unknown } }[])
      .filter((e) => e.valueFrom?.secretKeyRef)
      .map((e) => e.name)
      .sort();
    expect(secretNames).toEqual([
      'GATEWAY_CLIENTS',
      'GATEWAY_TOKEN_SECRET',
      'LOG_HASH_KEY',
      'METRICS_TOKEN',
      'REDIS_URL',
      'UPSTREAM_CLIENT_SECRET',
    ]);
    for (const name of secretNames) expect(Object.keys(byKind('ConfigMap').data)).not.toContain(name);
    expect(deployment.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(
      Number(byKind('ConfigMap').data.SHUTDOWN_TIMEOUT_SECONDS),
    );
  });

  it("size the memory limit from the ConfigMap's CACHE_MAX_BYTES as the comment computes it", () => {
    const mib = (q: string) => Number(/^(\d+)Mi$/.exec(q)![1]);
    const cacheMiB = Number(byKind('ConfigMap').data.CACHE_MAX_BYTES) / 2 ** 20;
    const { requests, limits } = byKind('Deployment').spec.template.spec.containers[0].resources;
    // 85 MiB baseline + 1.22 x the cache (bench: RSS +77.8 MiB for 64 MiB) + 48 MiB headroom.
    const needed = 85 + 1.22 * cacheMiB + 48;
    expect(mib(limits.memory)).toBeGreaterThanOrEqual(needed);
    expect(mib(limits.memory)).toBeLessThan(needed * 1.5);
    expect(mib(requests.memory)).toBeGreaterThanOrEqual(85 + 1.22 * cacheMiB);
  });
});
