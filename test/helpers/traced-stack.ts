// A gateway and its simulator with tracing on, exporting to an OTLP receiver of the test's own: the spans of one
// trace once the gateway has sent what it holds, and the access-log line of a request.
import { startOtlpReceiver, type OtlpReceiver } from './otlp-receiver.js';
import { startStack, type CapturedLog, type Stack, type StackOptions } from './stack.js';

/** OTLP span kinds as the receiver decodes them. */
export const SPAN_KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3 } as const;

type ReceivedSpan = ReturnType<OtlpReceiver['spans']>[number];

export interface TracedStack {
  stack: Stack;
  receiver: OtlpReceiver;
  /** Every span of one trace, after a flush of the gateway's exporter. */
  spansOf(traceId: string): Promise<ReceivedSpan[]>;
  /** The access-log line of a request, by a field of it (`traceId`, `requestId`). */
  requestLine(field: 'traceId' | 'requestId', value: string): CapturedLog | undefined;
  close(): Promise<void>;
}

/** `options.env` adds to the receiver's endpoint and a 10 ms batch delay. */
export async function startTracedStack(options: StackOptions = {}): Promise<TracedStack> {
  const receiver = await startOtlpReceiver();
  const stack = await startStack({
    ...options,
    env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '10', ...options.env },
  });
  return {
    stack,
    receiver,
    async spansOf(traceId) {
      await stack.gateway.services.tracing.flush();
      return receiver.spans().filter((s) => s.traceId === traceId);
    },
    requestLine: (field, value) => stack.logs.find((l) => l.fields.event === 'request' && l.fields[field] === value),
    async close() {
      await stack.close();
      await receiver.close();
    },
  };
}
