// The Cloudflare Workers entry point: the same app, configured from bindings (the same names as on Node).
import type { Hono } from 'hono';
import { Registry } from 'prom-client';
import type { AppEnv } from '../app-env.js';
import { createApp } from '../app.js';
import { systemClock } from '../clock.js';
import { ConfigError, parseConfig, type EnvSource } from '../config.js';
import { problemResponse } from '../errors.js';
import type { Logger, LogFields } from '../observability/logger.js';
import { metricSourcesOf } from '../observability/metric-sources.js';
import { createMetrics } from '../observability/metrics.js';
import { createServices } from '../services.js';
import { createFetchHttp } from '../upstream/http.js';

const LEVELS = ['debug', 'info', 'warn', 'error'] as const;

/** Workers logs are collected from the console; one JSON object per line, as pino writes on Node. */
function createConsoleLogger(level: string): Logger {
  const min = LEVELS.indexOf(level as (typeof LEVELS)[number]);
  const write = (lvl: (typeof LEVELS)[number]) => (fields: LogFields, msg: string) => {
    if (min < 0 || LEVELS.indexOf(lvl) < min) return;
    console.log(JSON.stringify({ level: lvl, time: new Date().toISOString(), service: 'callerid-gateway', ...fields, msg }));
  };
  return {
    debug: write('debug'),
    info: write('info'),
    warn: write('warn'),
    error: write('error'),
    enabled: (lvl) => min >= 0 && LEVELS.indexOf(lvl) >= min,
  };
}

function stringBindings(env: Record<string, unknown>): EnvSource {
  const out: EnvSource = {};
  for (const [key, value] of Object.entries(env)) if (typeof value === 'string') out[key] = value;
  return out;
}

// Built once per isolate from the first request's bindings: bindings are not available at module load.
let built: Promise<Hono<AppEnv>> | undefined;

async function build(env: Record<string, unknown>): Promise<Hono<AppEnv>> {
  const config = parseConfig(stringBindings(env));
  if (!config.upstream) {
    throw new ConfigError('UPSTREAM_AUTH_URL', 'the four UPSTREAM_* bindings are required on Workers (demo mode is Node only)');
  }
  const logger = createConsoleLogger(config.log.level);
  // Per isolate, without Node's default process metrics (they fail in workerd). METRICS_PORT has no meaning here.
  const metrics = createMetrics({ registry: new Registry(), clock: systemClock });
  const services = await createServices(
    { ...config, metrics: { ...config.metrics, port: 0 } },
    {
      http: createFetchHttp((input, init) => fetch(input, init), { maxBodyBytes: config.upstream.maxBodyBytes }),
      clock: systemClock,
      logger,
      telemetry: metrics.telemetry,
      metrics,
      peerAddress: (c) => c.req.header('cf-connecting-ip'),
    },
  );
  metrics.watch(metricSourcesOf(services));
  return createApp(services);
}

export default {
  async fetch(request: Request, env: Record<string, unknown>, ctx: unknown): Promise<Response> {
    built ??= build(env);
    let app: Hono<AppEnv>;
    try {
      app = await built;
    } catch (err) {
      built = undefined;
      const detail = err instanceof ConfigError ? err.message : 'start-up failed';
      console.log(JSON.stringify({ level: 'error', service: 'callerid-gateway', msg: detail }));
      return problemResponse('unavailable', 'The gateway is not configured correctly; see its logs.', crypto.randomUUID());
    }
    return app.fetch(request, env, ctx as never);
  },
};
