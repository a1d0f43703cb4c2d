// One OTLP/HTTP export (OpenTelemetry specification, "OTLP/HTTP"): a batch of spans POSTed to the traces endpoint in
// the configured encoding, through the runtime's `fetch`, tried again as export-retry.ts says, every try within the
// export timeout. The collector's answer is trusted with nothing: no redirect is followed, and at most a small,
// unencoded answer is read.
import type { TracingConfig } from '../../config/config.js';
import { declaredTooLarge, readWithin } from '../../base/bounded-body.js';
import { GATEWAY_NAME, GATEWAY_VERSION } from '../../base/version.js';
import { nextTryIn, retryableStatus, type DropCause, type FailedTry } from './export-retry.js';
import { JsonSpanQueue } from './otlp-json.js';
import { ProtobufSpanQueue } from './otlp-protobuf.js';
import type { ExportSource, SpanQueue } from './otlp-values.js';

/** The Fetch API's `fetch`, or any function that answers like it (tests, a runtime's own client). */
export type FetchFunction = (url: string, init: RequestInit) => Promise<Response>;

/** An exporter: the queue its spans wait in, already in its encoding, and how a batch taken from it is sent. */
export interface OtlpExporter {
  readonly queue: SpanQueue;
  /** Sends one body the queue gave; resolves undefined when the collector accepted it (2xx), else why not. Never rejects. */
  send(body: Uint8Array<ArrayBuffer> | string): Promise<DropCause | undefined>;
}

/** The waits between tries: the runtime's timer and the spans' clock (epoch ms). */
export interface ExportClock {
  readonly sleep: (ms: number) => Promise<void>;
  readonly now: () => number;
}

/** The most of a collector's answer read: a partial-success note is a few hundred bytes. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** The exporter names itself as the specification asks ("OTLP Exporter", User Agent), on every runtime. */
const USER_AGENT = `${GATEWAY_NAME}/${GATEWAY_VERSION}`;

interface Export {
  readonly url: string;
  readonly init: RequestInit;
  readonly clock: ExportClock;
  readonly fetch: FetchFunction;
}

export function otlpSender(config: TracingConfig, fetch: FetchFunction, clock: ExportClock): OtlpExporter {
  const source: ExportSource = { serviceName: config.serviceName, scopeName: GATEWAY_NAME };
  const json = config.protocol === 'http/json';
  // `identity`: an answer the runtime would unpack (Node's and Workers' fetch decode gzip) is not asked for.
  const headers = {
    'user-agent': USER_AGENT,
    ...config.headers,
    'content-type': json ? 'application/json' : 'application/x-protobuf',
    'accept-encoding': 'identity',
  };
  const queue = json ? new JsonSpanQueue(source) : new ProtobufSpanQueue(source);
  const send = (body: Uint8Array<ArrayBuffer> | string) => {
    // A redirect is an answer like any other, here a failed export: followed, it would post the batch and the
    // configured headers (an api-key) to wherever the collector points, or turn the export into a bodiless GET.
    const init: RequestInit = { method: 'POST', headers, body, redirect: 'manual' };
    return tryUntilDone({ url: config.url, init, clock, fetch }, clock.now() + config.timeoutMs);
  };
  return { queue, send };
}

/** Tries the export until the collector takes it, refuses it for good, or the attempts or the time run out. */
async function tryUntilDone(exp: Export, deadline: number): Promise<DropCause | undefined> {
  for (let attempt = 1; ; attempt++) {
    // Whole milliseconds: AbortSignal.timeout takes no fraction, and Node's clock has them.
    const failed = await tryOnce(exp, Math.floor(deadline - exp.clock.now()));
    if (failed === undefined) return undefined;
    const wait = nextTryIn(failed, attempt, exp.clock.now(), deadline);
    if (wait === undefined) return failed.cause;
    await exp.clock.sleep(wait);
  }
}

/** One POST of the batch within `remainingMs`: undefined when accepted, else how it failed. */
async function tryOnce(exp: Export, remainingMs: number): Promise<FailedTry | undefined> {
  if (remainingMs <= 0) return { cause: 'timeout', retry: false };
  let response: Response;
  try {
    response = await exp.fetch(exp.url, { ...exp.init, signal: AbortSignal.timeout(remainingMs) });
  } catch (error) {
    // The export timeout is final; any other failure to exchange (a refused connection) is tried again.
    return timedOut(error) ? { cause: 'timeout', retry: false } : { cause: 'unreachable', retry: true };
  }
  try {
    return await answerOf(response);
  } catch (error) {
    // Cut off while answering: the collector may have taken the batch, so it is not sent twice.
    return { cause: timedOut(error) ? 'timeout' : 'unreachable', retry: false };
  }
}

const timedOut = (error: unknown) =>
  error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');

/**
 * What the collector's answer says: accepted is a 2xx whose answer is neither encoded nor larger than
 * {@link MAX_ANSWER_BYTES}. The body is read to its end (which frees the connection) or cancelled at once.
 */
async function answerOf(response: Response): Promise<FailedTry | undefined> {
  const encoding = response.headers.get('content-encoding');
  const encoded = encoding !== null && encoding.trim().toLowerCase() !== 'identity';
  if (!response.ok || encoded || declaredTooLarge(response.headers.get('content-length'), MAX_ANSWER_BYTES)) {
    await response.body?.cancel().catch(() => undefined);
    if (response.ok) return { cause: 'bad_answer', retry: false };
    if (!retryableStatus(response.status)) return { cause: 'refused', retry: false };
    return { cause: 'unavailable', retry: true, retryAfter: response.headers.get('retry-after') };
  }
  if (response.body === null) return undefined;
  const read = await readWithin(response.body as unknown as AsyncIterable<Uint8Array>, MAX_ANSWER_BYTES);
  return read === null ? { cause: 'bad_answer', retry: false } : undefined;
}
