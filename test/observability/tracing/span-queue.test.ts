// The exporter's queues of ended spans (a span written in the export's encoding as it ends, a body taken a batch at a
// time), decoded by the test receiver with OpenTelemetry's proto files: batches taken part by part keep every span
// whole and in order, an attribute whose value comes back after another is written anew each time, and times keep
// their microseconds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JsonSpanQueue } from '../../../src/observability/tracing/otlp-json.js';
import { ProtobufSpanQueue } from '../../../src/observability/tracing/otlp-protobuf.js';
import type { FinishedSpan } from '../../../src/observability/tracing/span.js';
import { startOtlpReceiver, type OtlpReceiver } from '../../helpers/otlp-receiver.js';

const SOURCE = { serviceName: 'queue-under-test', scopeName: 'callerid-gateway' };
/** 2026-11-28T12:00:00.123456Z in milliseconds, and its nanoseconds. */
const START_MS = 1_795_867_200_123.456;
const START_NANOS = 1_795_867_200_123_456_000n;

/** Span `i`: its status and cache status alternate, its route repeats, its offset never does. */
function span(i: number): FinishedSpan {
  return {
    name: `GET /v2/contacts/search ${i}`,
    kind: 'server',
    context: {
      traceId: `${String(i).padStart(2, '0')}${'ab'.repeat(15)}`,
      spanId: 'cd'.repeat(8),
      sampled: true,
      random: true,
      traceState: undefined,
    },
    parentSpanId: undefined,
    startMs: START_MS + i,
    endMs: START_MS + i + 0.25,
    attributes: {
      'http.route': '/v2/contacts/search',
      'http.response.status_code': i % 2 === 0 ? 200 : 404,
      'cache.status': i % 3 === 0 ? 'hit' : 'miss',
      offset: 3 - i * 7,
      'url.path': '/v2/contacts/search'.slice(0, 19 - (i % 2)),
    },
    links: [],
    status: { code: 'unset' },
  };
}

let receiver: OtlpReceiver;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(() => receiver.close());

describe.each([
  ['http/protobuf', 'application/x-protobuf', () => new ProtobufSpanQueue(SOURCE)],
  ['http/json', 'application/json', () => new JsonSpanQueue(SOURCE)],
])('%s', (_protocol, contentType, queueOf) => {
  it('gives every span whole and in order, batch by batch, as spans keep ending', async () => {
    receiver.requests.length = 0;
    const queue = queueOf();
    const post = (body: Uint8Array<ArrayBuffer> | string) =>
      fetch(receiver.url, { method: 'POST', headers: { 'content-type': contentType }, body }).then((r) => r.status);
    for (let i = 0; i < 7; i++) queue.push(span(i));
    expect(await post(queue.take(3))).toBe(200);
    for (let i = 7; i < 12; i++) queue.push(span(i));
    expect(queue.length).toBe(9);
    expect(await post(queue.take(4))).toBe(200);
    expect(await post(queue.take(100))).toBe(200);
    expect(queue.length).toBe(0);

    expect(receiver.requests.map((r) => r.spans.length)).toEqual([3, 4, 5]);
    const spans = receiver.spans();
    spans.forEach((received, i) => {
      const sent = span(i);
      expect(received).toMatchObject({
        name: sent.name,
        traceId: sent.context.traceId,
        attributes: sent.attributes,
        serviceName: 'queue-under-test',
      });
      expect(received.startTimeUnixNano).toBe(START_NANOS + BigInt(i) * 1_000_000n);
      expect(received.endTimeUnixNano).toBe(START_NANOS + BigInt(i) * 1_000_000n + 250_000n);
    });
  });
});
