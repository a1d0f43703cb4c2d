// Metrics on Workers with an Analytics Engine binding: one data point per request, written by the runtime for
// the whole deployment (a /metrics scrape would reach one arbitrary isolate). Only closed-set values: the route
// template, method, status, cache result; never a number, an address, a token or a client secret.
import { HTTP_METHODS } from '../../observability/telemetry.js';
import type { FinishedRequest } from '../../observability/request-recorder.js';
import type { AnalyticsEngineDataset } from './bindings.js';

/**
 * Layout (query it with SQL over the dataset): index1 = route; blob1 = route, blob2 = method, blob3 = status,
 * blob4 = cache result (`none` when no lookup), blob5 = `api`, `console` or `other`;
 * double1 = duration ms, double2 = upstream ms spent for this request, double3 = status.
 */
export function analyticsDataPoint(
  r: FinishedRequest,
  upstreamMs: number,
): Parameters<AnalyticsEngineDataset['writeDataPoint']>[0] {
  const surface = r.route.startsWith('/console') ? 'console' : r.route.startsWith('/v2/') ? 'api' : 'other';
  return {
    indexes: [r.route],
    blobs: [
      r.route,
      (HTTP_METHODS as readonly string[]).includes(r.method) ? r.method : 'other',
      String(r.status),
      r.lookup?.cache ?? 'none',
      surface,
    ],
    doubles: [Math.round(r.elapsedMs * 1000) / 1000, Math.round(upstreamMs * 1000) / 1000, r.status],
  };
}
