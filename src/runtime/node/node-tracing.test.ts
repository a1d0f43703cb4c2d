// Tracing on Node: spans go to the collector through Node's HTTP client (undici), timed to the microsecond, and a
// flush (the shutdown's) sends what the batch timer has not sent yet.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../config/config.js';
import { createNodeTracing } from './node-tracing.js';
import { startOtlpReceiver, type OtlpReceiver } from '../../../test/helpers/otlp-receiver.js';

describe('Node tracing', () => {
  let receiver: OtlpReceiver;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
  });
  afterAll(() => receiver.close());

  it('times spans below the millisecond and sends the queue on flush, before the batch delay', async () => {
    const tracing = createNodeTracing(
      parseConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '60000' }).tracing,
    );
    const spans = Array.from({ length: 20 }, (_, i) => tracing.tracer.startSpan(`short ${i}`, undefined));
    for (const span of spans) span.end();
    const started = performance.now();
    await tracing.flush();
    expect(performance.now() - started).toBeLessThan(5_000);
    const received = receiver.spans();
    expect(received).toHaveLength(20);
    const durations = received.map((s) => s.endTimeUnixNano - s.startTimeUnixNano);
    expect(durations.every((ns) => ns >= 0n && ns < 1_000_000_000n)).toBe(true);
    // Date.now would make every one of these 0 or a whole millisecond.
    expect(durations.some((ns) => ns % 1_000_000n !== 0n)).toBe(true);
  });

  it('is the no-op tracer when tracing is off', () => {
    expect(createNodeTracing(parseConfig({}).tracing).tracer.enabled).toBe(false);
  });
});
