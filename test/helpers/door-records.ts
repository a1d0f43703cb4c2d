// What Node's server door and the app in process write of the same request, for the parity tables: the access-log
// records and the exported spans, each request in a trace of its own that both gateways continue and export to one
// OTLP receiver under a service name of their own.
import { expect } from 'vitest';
import type { OtlpReceiver, ReceivedSpan } from './otlp-receiver.js';
import type { CapturedLog } from './recorders.js';
import type { ThreeDoors } from './three-doors.js';

/** The caller's span every request names as its parent. */
export const CALLER_SPAN = 'b7ad6b7169203331';
const NODE_SERVICE = 'node-server-door';
const IN_PROCESS_SERVICE = 'in-process-door';

/** The `n`th trace of a table, and its `traceparent` line (sampled). */
export const traceIdOf = (n: number) => `0af7651916cd43dd8448eb21${String(n).padStart(8, '0')}`;
export const traceparentLine = (traceId: string) => `traceparent: 00-${traceId}-${CALLER_SPAN}-01`;

/** The settings of each door's gateway (startThreeDoors' `socketEnv`, `inProcessEnv`): tracing to `receiver`. */
export function tracingEnvs(receiver: OtlpReceiver) {
  const envOf = (serviceName: string) => ({
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url,
    OTEL_BSP_SCHEDULE_DELAY: '10',
    OTEL_SERVICE_NAME: serviceName,
  });
  return { socketEnv: envOf(NODE_SERVICE), inProcessEnv: envOf(IN_PROCESS_SERVICE) };
}

/**
 * The access-log records of one trace, every field but the duration, the span's own id and (unless `requestIds`)
 * the request id; those are checked to be there.
 */
export function recordsOf(logs: CapturedLog[], traceId: string, requestIds: boolean) {
  return logs
    .filter((l) => l.fields.event === 'request' && l.fields.traceId === traceId)
    .map(({ level, msg, fields }) => {
      const { durationMs, spanId, requestId, ...rest } = fields;
      expect([typeof durationMs, typeof spanId, typeof requestId]).toEqual(['number', 'string', 'string']);
      return { level, msg, ...rest, ...(requestIds ? { requestId } : {}) };
    });
}

/**
 * Each door's spans of a trace, once both have exported as many (an upstream call the caller stopped waiting for
 * ends after its answer); at most 10 s, then as they are.
 */
export async function spansOfTrace(three: ThreeDoors, receiver: OtlpReceiver, traceId: string) {
  const of = (service: string) => receiver.spans().filter((s) => s.traceId === traceId && s.serviceName === service);
  for (let waited = 0; ; waited += 50) {
    await Promise.all([three.socket.services.tracing.flush(), three.inProcess.services.tracing.flush()]);
    const spans = { socket: of(NODE_SERVICE), inProcess: of(IN_PROCESS_SERVICE) };
    if (spans.socket.length === spans.inProcess.length || waited >= 10_000) return spans;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * A Host the rules refuse is never recorded: Node's door names its listener's address, the app in process its URL's
 * host. Checked, then left out of the comparison.
 */
export function withoutRefusedHost(spans: { socket: ReceivedSpan[]; inProcess: ReceivedSpan[] }) {
  for (const [door, address] of [
    [spans.socket, '127.0.0.1'],
    [spans.inProcess, 'localhost'],
  ] as const)
    for (const span of door) {
      expect(span.attributes['server.address']).toBe(address);
      delete span.attributes['server.address'];
    }
}

/**
 * A door's spans as both doors must export them: name, kind, status, links, attributes and the parent by its name
 * (ids are drawn per process). What the connection gives is left out: the app in process has no peer
 * (`client.address`), no HTTP version (`network.protocol.version`) and no port of its own (`server.port`).
 */
export function comparableSpans(spans: ReceivedSpan[]) {
  const parentOf = (id: string) => (id === CALLER_SPAN ? 'the caller' : spans.find((s) => s.spanId === id)?.name);
  return spans
    .map(({ name, kind, status, links, parentSpanId, attributes: all }) => {
      const {
        'client.address': _peer,
        'network.protocol.version': _version,
        'server.port': _port,
        ...attributes
      } = all;
      return {
        name,
        kind,
        status,
        links: links.length,
        parent: parentOf(parentSpanId),
        attributes,
      };
    })
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}
