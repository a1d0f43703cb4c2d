// One OTLP/HTTP export request (OpenTelemetry specification, "OTLP/HTTP"): a batch of spans POSTed to the traces
// endpoint in the configured encoding, through the runtime's `fetch`, bounded by the export timeout. The collector's
// answer is trusted with nothing: no redirect is followed, and at most a small, unencoded answer is read.
import type { TracingConfig } from '../../config/config.js';
import { declaredTooLarge, readWithin } from '../../base/bounded-body.js';
import { encodeOtlpJson } from './otlp-json.js';
import { encodeOtlpProtobuf } from './otlp-protobuf.js';
import type { ExportSource } from './otlp-values.js';
import type { FinishedSpan } from './span.js';

/** The Fetch API's `fetch`, or any function that answers like it (tests, a runtime's own client). */
export type FetchFunction = (url: string, init: RequestInit) => Promise<Response>;

/** Sends one batch; resolves true when the collector accepted it (2xx), false on any failure. Never rejects. */
export type SendSpans = (spans: readonly FinishedSpan[]) => Promise<boolean>;

const SCOPE_NAME = 'callerid-gateway';

/** The most of a collector's answer read: a partial-success note is a few hundred bytes. */
const MAX_ANSWER_BYTES = 64 * 1024;

export function otlpSender(config: TracingConfig, fetch: FetchFunction): SendSpans {
  const source: ExportSource = { serviceName: config.serviceName, scopeName: SCOPE_NAME };
  const json = config.protocol === 'http/json';
  // `identity`: an answer the runtime would unpack (Node's and Workers' fetch decode gzip) is not asked for.
  const headers = {
    ...config.headers,
    'content-type': json ? 'application/json' : 'application/x-protobuf',
    'accept-encoding': 'identity',
  };
  return async (spans) => {
    try {
      const body = json ? encodeOtlpJson(spans, source) : encodeOtlpProtobuf(spans, source);
      // A redirect is an answer like any other, here a failed export: followed, it would post the batch and the
      // configured headers (an api-key) to wherever the collector points, or turn the export into a bodiless GET.
      const response = await fetch(config.url, {
        method: 'POST',
        headers,
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(config.timeoutMs),
      });
      return await accepted(response);
    } catch {
      return false;
    }
  };
}

/**
 * Whether the collector took the batch: a 2xx whose answer is neither encoded nor larger than
 * {@link MAX_ANSWER_BYTES}. The body is read to its end (which frees the connection) or cancelled at once.
 */
async function accepted(response: Response): Promise<boolean> {
  const encoding = response.headers.get('content-encoding');
  const encoded = encoding !== null && encoding.trim().toLowerCase() !== 'identity';
  if (!response.ok || encoded || declaredTooLarge(response.headers.get('content-length'), MAX_ANSWER_BYTES)) {
    await response.body?.cancel().catch(() => undefined);
    return false;
  }
  if (response.body === null) return true;
  return (await readWithin(response.body as unknown as AsyncIterable<Uint8Array>, MAX_ANSWER_BYTES)) !== null;
}
