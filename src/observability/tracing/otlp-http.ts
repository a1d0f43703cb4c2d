// One OTLP/HTTP export request (OpenTelemetry specification, "OTLP/HTTP"): a batch of spans POSTed to the traces
// endpoint in the configured encoding, through the runtime's `fetch`, bounded by the export timeout.
import type { TracingConfig } from '../../config.js';
import { encodeOtlpJson } from './otlp-json.js';
import { encodeOtlpProtobuf } from './otlp-protobuf.js';
import type { ExportSource } from './otlp-values.js';
import type { FinishedSpan } from './span.js';

/** The Fetch API's `fetch`, or any function that answers like it (tests, a runtime's own client). */
export type FetchFunction = (url: string, init: RequestInit) => Promise<Response>;

/** Sends one batch; resolves true when the collector accepted it (2xx), false on any failure. Never rejects. */
export type SendSpans = (spans: readonly FinishedSpan[]) => Promise<boolean>;

const SCOPE_NAME = 'callerid-gateway';

export function otlpSender(config: TracingConfig, fetch: FetchFunction): SendSpans {
  const source: ExportSource = { serviceName: config.serviceName, scopeName: SCOPE_NAME };
  const json = config.protocol === 'http/json';
  const headers = { ...config.headers, 'content-type': json ? 'application/json' : 'application/x-protobuf' };
  return async (spans) => {
    try {
      const body = json ? encodeOtlpJson(spans, source) : encodeOtlpProtobuf(spans, source);
      const response = await fetch(config.url, {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(config.timeoutMs),
      });
      // The body (a partial-success note at most) is not needed; reading it to the end frees the connection.
      await response.arrayBuffer();
      return response.ok;
    } catch {
      return false;
    }
  };
}
