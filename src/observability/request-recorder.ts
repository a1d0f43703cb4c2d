// Records one finished request: the request metrics and one JSON log line (the route template, never the
// URL, whose query holds the number; the number itself only as a keyed hash). Shared by the access-log
// middleware and Node's search door, so both write exactly the same.
import type { CacheResult } from './telemetry.js';
import { jsonString, type LogFields, type Logger, type LogLevel } from './logger.js';
import type { MetricsEndpoint } from './metrics.js';
import type { KeyedHasher } from './keyed-hash.js';
import type { Span } from './tracing/span.js';

export interface FinishedRequest {
  requestId: string;
  method: string;
  /** The route template, or `unmatched`. */
  route: string;
  status: number;
  elapsedMs: number;
  clientId?: string | undefined;
  /** What a search looked up (the search's `LookupNote`): the number, logged only as a keyed hash, and the cache's result. */
  lookup?: { e164: string; cache?: CacheResult | undefined } | undefined;
  /**
   * The request's server span: its trace and span ids (W3C Trace Context) go on the log line when it has a trace,
   * and on the duration as its exemplar when the gateway records it (the span is exported).
   */
  span?: Pick<Span, 'context' | 'recording'> | undefined;
}

export interface RequestRecorderOptions {
  logger: Logger;
  metrics?: MetricsEndpoint | undefined;
  hasher?: KeyedHasher | undefined;
  /** Routes logged at debug instead of info: probes and scrapes would drown the rest. */
  quietRoutes?: ReadonlySet<string>;
}

export type RequestRecorder = (request: FinishedRequest) => void;

const DEFAULT_QUIET = new Set(['/healthz', '/readyz', '/metrics']);

export function createRequestRecorder(options: RequestRecorderOptions): RequestRecorder {
  const { logger, metrics, hasher } = options;
  const quiet = options.quietRoutes ?? DEFAULT_QUIET;
  const enabled = (level: LogLevel): boolean => logger.enabled?.(level) ?? true;
  const json = logger.json?.bind(logger);

  return function recordRequest(r) {
    const trace = r.span?.context;
    metrics?.observeRequest(r.route, r.method, r.status, r.elapsedMs / 1000, r.span?.recording ? trace : undefined);

    const level: LogLevel = r.status >= 500 ? 'warn' : quiet.has(r.route) ? 'debug' : 'info';
    if (!enabled(level)) return;
    const durationMs = Math.round(r.elapsedMs * 1000) / 1000;
    const e164 = r.lookup?.e164;
    const known = e164 === undefined || hasher === undefined ? undefined : hasher.cached(e164);
    if (json !== undefined && (e164 === undefined || hasher === undefined || known !== undefined)) {
      // The same fields in the same order as the object below, serialised here: the hot path's line.
      let line = `"event":"request","requestId":${jsonString(r.requestId)},"method":${jsonString(r.method)},"route":${jsonString(r.route)},"status":${r.status},"durationMs":${durationMs}`;
      if (r.clientId !== undefined) line += `,"clientId":${jsonString(r.clientId)}`;
      if (trace !== undefined) line += `,"traceId":"${trace.traceId}","spanId":"${trace.spanId}"`;
      if (r.lookup?.cache !== undefined) line += `,"cache":"${r.lookup.cache}"`;
      if (known !== undefined) line += `,"numberHash":"${known}"`;
      json(level, line, 'request');
      return;
    }
    const fields: LogFields = {
      event: 'request',
      requestId: r.requestId,
      method: r.method,
      route: r.route,
      status: r.status,
      durationMs,
    };
    if (r.clientId !== undefined) fields.clientId = r.clientId;
    if (trace !== undefined) {
      fields.traceId = trace.traceId;
      fields.spanId = trace.spanId;
    }
    if (r.lookup?.cache !== undefined) fields.cache = r.lookup.cache;
    if (e164 !== undefined && hasher !== undefined && known === undefined) {
      // Not memoised yet: the line is written once the hash is ready, without holding the response.
      void hasher.hash(e164).then(
        (numberHash) => logger[level]({ ...fields, numberHash }, 'request'),
        () => logger[level](fields, 'request'),
      );
      return;
    }
    if (known !== undefined) fields.numberHash = known;
    logger[level](fields, 'request');
  };
}
