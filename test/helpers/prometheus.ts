// Prometheus's own server (the Debian package's `prometheus` binary) on a free loopback port with a temporary
// storage directory, scraping given targets every second, and a client for its HTTP query API.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';

export const PROMETHEUS_BIN = '/usr/bin/prometheus';

export interface PromSample {
  metric: Record<string, string>;
  /** [unix seconds, value as Prometheus prints it ("NaN", "+Inf", "0.25")]. */
  value: [number, string];
}

interface QueryAnswer {
  status: 'success' | 'error';
  errorType?: string;
  error?: string;
  data?: { resultType: string; result: PromSample[] };
}

export interface RunningPrometheus {
  /**
   * Resolves once every target of the job answered a scrape (by default all of them): traffic sent after it has a
   * sample from before it, so rate() sees it grow.
   */
  scraped(targets?: number, timeoutMs?: number): Promise<void>;
  url: string;
  /** An instant query through /api/v1/query; a parse error comes back as status "error", never a throw. */
  query(expr: string): Promise<QueryAnswer>;
  /** GET on the API, parsed. */
  api<T>(path: string): Promise<T>;
  /** The server's own output, for a failing test's message. */
  output(): string;
  close(): Promise<void>;
}

export interface PrometheusOptions {
  job: string;
  targets: string[];
  /** Absolute paths of rule files to load and evaluate. */
  ruleFiles?: string[];
  scrapeIntervalSeconds?: number;
  /** Sent as `Authorization: Bearer` on every scrape (METRICS_TOKEN). */
  bearerToken?: string;
  /** Feature flags to enable (`--enable-feature=`), e.g. `exemplar-storage`. */
  features?: string[];
}

export async function startPrometheus(options: PrometheusOptions): Promise<RunningPrometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'prometheus-'));
  const interval = `${options.scrapeIntervalSeconds ?? 1}s`;
  const config = [
    'global:',
    `  scrape_interval: ${interval}`,
    `  evaluation_interval: ${interval}`,
    ...(options.ruleFiles?.length ? ['rule_files:', ...options.ruleFiles.map((f) => `  - ${JSON.stringify(f)}`)] : []),
    'scrape_configs:',
    `  - job_name: ${JSON.stringify(options.job)}`,
    ...(options.bearerToken ? ['    authorization:', `      credentials: ${JSON.stringify(options.bearerToken)}`] : []),
    '    static_configs:',
    `      - targets: [${options.targets.map((t) => JSON.stringify(t)).join(', ')}]`,
  ].join('\n');
  const configFile = join(dir, 'prometheus.yml');
  writeFileSync(configFile, config + '\n');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    PROMETHEUS_BIN,
    [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      // Nothing leaves the machine: no external URL lookups, no remote anything.
      `--web.external-url=${url}/`,
      '--log.level=warn',
      ...(options.features ?? []).map((feature) => `--enable-feature=${feature}`),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) {
      await close();
      throw new Error(`prometheus exited with ${child.exitCode}: ${output}`);
    }
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      await close();
      throw new Error(`prometheus not ready within 20 s: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }

  const api = async <T>(path: string): Promise<T> => (await (await fetch(`${url}${path}`)).json()) as T;
  const query = (expr: string) => api<QueryAnswer>(`/api/v1/query?query=${encodeURIComponent(expr)}`);
  return {
    url,
    api,
    query,
    async scraped(targets = options.targets.length, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      const expr = `count(up{job="${options.job}"} == 1)`;
      while ((await query(expr)).data?.result[0]?.value[1] !== String(targets)) {
        if (Date.now() > deadline)
          throw new Error(`${targets} targets of ${options.job} not scraped within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 250));
      }
    },
    output: () => output,
    close,
  };
}
