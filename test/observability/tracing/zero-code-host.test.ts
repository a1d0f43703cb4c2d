// The built gateway started under OpenTelemetry's zero-code instrumentation (`node --import` of the SDK with its HTTP
// and undici instrumentations, exporting over OTLP to a receiver of the test's own): each request is one trace at the
// host's exporter, the HTTP instrumentation's server span its root, the gateway's spans inside it; the upstream gets
// one `traceparent`, the gateway's client span's. Also: the package's `exports` name the built factories.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildRunnableDist,
  REPO,
  startGatewayProcess,
  type BuiltDist,
  type GatewayProcess,
} from '../../container/build-dist.js';
import { startOtlpReceiver, type OtlpReceiver } from '../../helpers/otlp-receiver.js';
import { CLIENTS, loginAt, stackEnv, UPSTREAM_CLIENTS } from '../../helpers/stack.js';
import { SPAN_KIND } from '../../helpers/traced-stack.js';
import { startSimulatorServer, type SimulatorServer } from '../../../src/simulator/server.js';

const REGISTER = join(REPO, 'test/fixtures/otel-zero-code/register.mjs');

describe('the gateway under zero-code OpenTelemetry instrumentation', () => {
  let built: BuiltDist;
  let receiver: OtlpReceiver;
  let simulator: SimulatorServer;
  let gateway: GatewayProcess;
  let base: string;

  beforeAll(async () => {
    built = await buildRunnableDist('callerid-zero-code-');
    receiver = await startOtlpReceiver();
    simulator = await startSimulatorServer({ clients: UPSTREAM_CLIENTS });
    const env = Object.fromEntries(
      Object.entries(await stackEnv(simulator.url)).filter((e): e is [string, string] => e[1] !== undefined),
    );
    gateway = await startGatewayProcess(built.dir, {
      ...env,
      NODE_OPTIONS: `--import=${REGISTER}`,
      OTEL_SERVICE_NAME: 'host-process',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '10',
      OTEL_METRICS_EXPORTER: 'none',
      OTEL_LOGS_EXPORTER: 'none',
      // The process detector's `process.command_args` is an array value, which the test's receiver does not read.
      OTEL_NODE_RESOURCE_DETECTORS: 'env,host',
    });
    base = `http://127.0.0.1:${gateway.port}`;
  }, 240_000);
  afterAll(async () => {
    gateway?.child.kill('SIGTERM');
    await gateway?.exited;
    await simulator?.close();
    await receiver?.close();
    await built?.cleanup();
  });

  /** The spans of the trace whose root is the host's server span for `name`, once the gateway's span arrived. */
  async function traceOf(gatewaySpanName: string) {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const spans = receiver.spans();
      const own = spans.find((s) => s.name === gatewaySpanName && s.kind === SPAN_KIND.SERVER);
      if (own !== undefined) return { own, spans: spans.filter((s) => s.traceId === own.traceId) };
      if (Date.now() > deadline) throw new Error(`no span ${gatewaySpanName}: ${spans.map((s) => s.name).join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it("puts a login and a search each in one trace under the host's server span, the upstream calls under the gateway's", async () => {
    const token = await loginAt(base, 'crm', CLIENTS.crm);
    const res = await fetch(`${base}/v2/contacts/search?what=${encodeURIComponent('+442079460011')}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
    await res.text();

    for (const name of ['POST /token/login', 'GET /v2/contacts/search']) {
      const { own, spans } = await traceOf(name);
      const root = spans.find((s) => s.spanId === own.parentSpanId)!;
      expect(root).toMatchObject({ kind: SPAN_KIND.SERVER, parentSpanId: '', serviceName: 'host-process' });
      expect(own.serviceName).toBe('host-process');
      // Every other span of the trace hangs from the gateway's server span.
      const ids = new Set(spans.map((s) => s.spanId));
      for (const span of spans.filter((s) => s !== root)) expect(ids.has(span.parentSpanId)).toBe(true);
    }
    const { own, spans } = await traceOf('GET /v2/contacts/search');
    const upstream = spans.find((s) => s.kind === SPAN_KIND.CLIENT && s.name === 'GET /v2/contacts/search')!;
    expect(upstream.parentSpanId).not.toBe('');
    expect(upstream.attributes['url.full']).toMatch(/\?what=REDACTED$/);
    // One traceparent reached the upstream: the gateway's client span's, in the host's trace.
    const seen = simulator.controls.stats().traceparentsSeen.filter((t) => t.includes(own.traceId));
    expect(seen).toEqual([`00-${own.traceId}-${upstream.spanId}-01`]);
    for (const span of spans) expect(JSON.stringify(span.attributes)).not.toMatch(/2079460011/);
  });

  it("leaves the OTEL_* variables to the host's SDK: none is named as unknown at start", () => {
    expect(gateway.lines.filter((line) => line.event === 'unknown_setting')).toEqual([]);
  });

  it('exports the Node and Worker factories from the built package', async () => {
    const { exports } = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
      exports: Record<string, { default: string }>;
    };
    const node = (await import(join(built.dir, exports['./node']!.default))) as Record<string, unknown>;
    expect(typeof node.createNodeGateway).toBe('function');
    // The Worker's entry imports `cloudflare:workers`: only its presence in the build is checked outside workerd.
    const check = spawn(process.execPath, ['--check', join(built.dir, exports['./workers']!.default)]);
    expect(await new Promise((resolve) => check.once('exit', resolve))).toBe(0);
  });
});
