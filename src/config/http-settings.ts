// The gateway's listeners and what an outsider can push against (docs/configuration.md, "HTTP"; docs/security.md):
// address and port, its public base URL, proxies trusted, body and time bounds, the metrics port, logs and /docs.
import * as z from 'zod/mini';
import { flag, httpUrl, int, oneOf, optionalSecret, setting, textOr } from './settings-table.js';

/**
 * The gateway's public base URL, its OAuth issuer identifier (RFC 8414 section 2): an http(s) URL without query,
 * fragment or credentials; a trailing slash is dropped.
 */
const baseUrl = z.pipe(
  httpUrl,
  z.string().check(
    z.refine((v) => {
      const url = new URL(v);
      return !v.includes('?') && !v.includes('#') && !url.username && !url.password;
    }, 'must be a base URL without query, fragment or credentials, e.g. https://callerid.example.com'),
  ),
);

export const HTTP_SETTINGS = {
  port: setting('PORT', int(0, 65535, 8080)),
  host: setting('HOST', textOr('0.0.0.0')),
  /** The base URL clients reach the gateway at (the OAuth issuer); undefined (development only): each request's origin. */
  publicBaseUrl: setting('PUBLIC_BASE_URL', z.optional(baseUrl)),
  trustProxyHops: setting('TRUST_PROXY_HOPS', int(0, 10, 0)),
  /** Bounds an outsider can push against (docs/security.md). */
  http: {
    maxBodyBytes: setting('REQUEST_MAX_BODY_BYTES', int(256, 1024 ** 2, 4096)),
    headersTimeoutSeconds: setting('HTTP_HEADERS_TIMEOUT_SECONDS', int(1, 600, 10)),
    requestTimeoutSeconds: setting('HTTP_REQUEST_TIMEOUT_SECONDS', int(1, 3600, 30)),
    maxConnections: setting('HTTP_MAX_CONNECTIONS', int(1, 1_000_000, 10_000)),
  },
  shutdownTimeoutSeconds: setting('SHUTDOWN_TIMEOUT_SECONDS', int(0, 600, 10)),
  metrics: {
    token: setting('METRICS_TOKEN', optionalSecret),
    // On a listener of its own by default (9464, OpenTelemetry's Prometheus port): its labels name every client id,
    // which no anonymous caller of the API port should learn. 0: on the API port.
    port: setting('METRICS_PORT', int(0, 65535, 9464)),
    // Loopback by default, as OpenTelemetry's Prometheus exporter: a container or a pod sets 0.0.0.0 to be scraped.
    host: setting('METRICS_HOST', textOr('127.0.0.1')),
  },
  log: {
    level: setting('LOG_LEVEL', oneOf(['debug', 'info', 'warn', 'error', 'silent'], 'info')),
    hashKey: setting('LOG_HASH_KEY', optionalSecret),
  },
  docs: { enabled: setting('DOCS_ENABLED', flag('true', 'false', true)) },
};
