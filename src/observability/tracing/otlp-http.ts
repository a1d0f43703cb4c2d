// One OTLP/HTTP export (OpenTelemetry specification, "OTLP/HTTP"): a batch of spans POSTed to the traces endpoint in
// the configured encoding, through the runtime's HTTP client (base/upstream-http.ts, an instance of the exporter's
// own), tried again as export-retry.ts says, every try within the export timeout. The collector's answer is trusted
// with nothing: no redirect is followed, and at most a small, unencoded answer is read.
import type { TracingConfig } from '../../config/config.js';
import { GATEWAY_NAME, GATEWAY_VERSION } from '../../base/version.js';
import { UpstreamTransportError, type UpstreamHttp, type UpstreamRequest } from '../../base/upstream-http.js';
import { nextTryIn, retryableStatus, type DropCause, type FailedTry } from './export-retry.js';
import { JsonSpanQueue } from './otlp-json.js';
import { ProtobufSpanQueue } from './otlp-protobuf.js';
import type { ExportSource, SpanQueue } from './otlp-values.js';

/** The runtime's HTTP client for export requests, built for answers of at most `maxBodyBytes`. */
export type ExportHttp = (maxBodyBytes: number) => UpstreamHttp;

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
  /** The request but its time left. */
  readonly request: Omit<UpstreamRequest, 'timeoutMs'>;
  readonly clock: ExportClock;
  readonly http: UpstreamHttp;
}

export function otlpSender(config: TracingConfig, exportHttp: ExportHttp, clock: ExportClock): OtlpExporter {
  const source: ExportSource = { serviceName: config.serviceName, scopeName: GATEWAY_NAME };
  const json = config.protocol === 'http/json';
  // `identity`: an answer the runtime would unpack (fetch decodes gzip) is not asked for, and one that comes encoded
  // anyway is not read (`unencoded`).
  const headers = {
    'user-agent': USER_AGENT,
    ...config.headers,
    'content-type': json ? 'application/json' : 'application/x-protobuf',
    'accept-encoding': 'identity',
  };
  const queue = json ? new JsonSpanQueue(source) : new ProtobufSpanQueue(source);
  // A redirect is an answer like any other, here a failed export: the client follows none (followed, it would post
  // the batch and the configured headers, an api-key, to wherever the collector points).
  const http = exportHttp(MAX_ANSWER_BYTES);
  const send = (body: Uint8Array<ArrayBuffer> | string) => {
    const request = { method: 'POST', url: config.url, headers, body, unencoded: true } as const;
    return tryUntilDone({ request, clock, http }, clock.now() + config.timeoutMs);
  };
  return { queue, send };
}

/** Tries the export until the collector takes it, refuses it for good, or the attempts or the time run out. */
async function tryUntilDone(exp: Export, deadline: number): Promise<DropCause | undefined> {
  for (let attempt = 1; ; attempt++) {
    // Whole milliseconds: AbortSignal.timeout (the fetch client's) takes no fraction, and Node's clock has them.
    const failed = await tryOnce(exp, Math.floor(deadline - exp.clock.now()));
    if (failed === undefined) return undefined;
    const wait = nextTryIn(failed, attempt, exp.clock.now(), deadline);
    if (wait === undefined) return failed.cause;
    await exp.clock.sleep(wait);
  }
}

/**
 * One POST of the batch within `remainingMs`: undefined when the collector accepted it (a 2xx whose answer is
 * neither encoded nor larger than {@link MAX_ANSWER_BYTES}), else how it failed.
 */
async function tryOnce(exp: Export, remainingMs: number): Promise<FailedTry | undefined> {
  if (remainingMs <= 0) return { cause: 'timeout', retry: false };
  let status: number;
  let retryAfter: string | null | undefined;
  try {
    ({ status, retryAfter } = await exp.http.request({ ...exp.request, timeoutMs: remainingMs }));
  } catch (error) {
    return failedExchange(error);
  }
  if (status >= 200 && status < 300) return undefined;
  if (!retryableStatus(status)) return { cause: 'refused', retry: false };
  return { cause: 'unavailable', retry: true, retryAfter };
}

/**
 * An exchange that failed: the export timeout is final, an answer too large or encoded is a bad one, and a connection
 * that failed (refused) is tried again, unless the answer had begun: the collector may have taken the batch, so it
 * is not sent twice.
 */
function failedExchange(error: unknown): FailedTry {
  const failure = error instanceof UpstreamTransportError ? error : undefined;
  switch (failure?.kind) {
    case 'timeout':
      return { cause: 'timeout', retry: false };
    case 'too_large':
    case 'encoded':
      return { cause: 'bad_answer', retry: false };
    default:
      return { cause: 'unreachable', retry: failure?.answered !== true };
  }
}
