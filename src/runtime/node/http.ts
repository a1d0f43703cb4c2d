// The Node upstream transport: undici's pooled keep-alive Agent, driven through its dispatch handler API. A search
// runs one dispatch, one timer and a list of chunks: no AbortSignal (an event target and a timer each, measured at
// about 17 µs of CPU per request), no body stream and no async iteration, which `request()` and `fetch()` add.
import { Agent, type Dispatcher } from 'undici';
import {
  DEFAULT_MAX_BODY_BYTES,
  refusedAnswer,
  tooLarge,
  UpstreamTransportError,
  type UpstreamHttp,
  type UpstreamRequest,
  type UpstreamResponse,
} from '../../base/upstream-http.js';

export interface NodeHttpOptions {
  /** Open connections kept per upstream origin. */
  connections?: number;
  keepAliveTimeoutMs?: number;
  /** UPSTREAM_MAX_BODY_BYTES: a bigger answer fails without being read whole. */
  maxBodyBytes?: number;
  /**
   * How long a new connection may take (UPSTREAM_TIMEOUT_MS): a request waits for its connection before it can be
   * aborted, so this bounds how long one the caller gave up on stays queued. Default undici's 10 s.
   */
  connectTimeoutMs?: number;
}

/** The first value of a header undici may give as a list. */
const first = (value: string | string[] | undefined): string | null =>
  (Array.isArray(value) ? value[0] : value) ?? null;

/** `https://host:port` and `/path?query` of an absolute URL (the configured upstream's), as undici's dispatch takes them. */
function splitUrl(url: string): { origin: string; path: string } {
  const scheme = url.indexOf('://');
  if (scheme === -1) throw new TypeError('the upstream URL is not absolute');
  const slash = url.indexOf('/', scheme + 3);
  return slash === -1 ? { origin: url, path: '/' } : { origin: url.slice(0, slash), path: url.slice(slash) };
}

export function createNodeHttp(options: NodeHttpOptions = {}): UpstreamHttp {
  const dispatcher = new Agent({
    connections: options.connections ?? 128,
    keepAliveTimeout: options.keepAliveTimeoutMs ?? 30_000,
    pipelining: 1,
    ...(options.connectTimeoutMs === undefined ? {} : { connect: { timeout: options.connectTimeoutMs } }),
  });
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;

  function request(req: UpstreamRequest): Promise<UpstreamResponse> {
    return new Promise<UpstreamResponse>((resolve, reject) => {
      let controller: Dispatcher.DispatchController | undefined;
      let settled = false;
      let status = 0;
      let contentType: string | null = null;
      let retryAfter: string | null = null;
      const chunks: Buffer[] = [];
      let size = 0;

      // `status` is set once the answer has begun: a failure after it is one of an answered request.
      const timedOut = (cause?: unknown): UpstreamTransportError =>
        new UpstreamTransportError('timeout', `no answer within ${req.timeoutMs} ms`, {
          cause,
          answered: status !== 0,
        });
      /** Fails the request once; the exchange, if it started, is aborted so its connection is not reused. */
      const fail = (err: UpstreamTransportError): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(err);
        controller?.abort(err);
      };
      // The whole exchange (a free connection, the headers, every chunk) within the request's timeout.
      const timer = setTimeout(() => fail(timedOut()), req.timeoutMs);

      const handler: Dispatcher.DispatchHandler = {
        onRequestStart(c) {
          controller = c;
          // Timed out while it waited for a connection: it goes no further.
          if (settled) c.abort(timedOut());
        },
        onResponseStart(c, statusCode, headers) {
          if (statusCode < 200) return; // 1xx: the answer follows
          status = statusCode;
          const refused = refusedAnswer(req, { get: (name) => first(headers[name]) }, maxBodyBytes);
          if (refused !== undefined) {
            // Aborting closes that connection rather than reading the rest into the pool.
            fail(refused);
            return;
          }
          contentType = first(headers['content-type']);
          retryAfter = first(headers['retry-after']);
        },
        onResponseData(c, chunk) {
          if (settled) return;
          size += chunk.byteLength;
          if (size > maxBodyBytes) {
            fail(tooLarge(maxBodyBytes));
            return;
          }
          chunks.push(chunk);
        },
        onResponseEnd() {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          const body = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, size).toString('utf8');
          resolve({ status, contentType, body, retryAfter });
        },
        onResponseError(c, err) {
          const code = (err as { code?: string }).code;
          fail(
            code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT'
              ? timedOut(err)
              : new UpstreamTransportError('network', 'connection failed', { cause: err, answered: status !== 0 }),
          );
        },
      };
      try {
        const { origin, path } = splitUrl(req.url);
        dispatcher.dispatch(
          {
            origin,
            path,
            method: req.method,
            headers: req.headers,
            body: req.body ?? null,
            headersTimeout: req.timeoutMs,
            bodyTimeout: req.timeoutMs,
          },
          handler,
        );
      } catch (err) {
        // A URL that is not absolute, a closed dispatcher or bad options throw synchronously.
        fail(new UpstreamTransportError('network', 'connection failed', { cause: err }));
      }
    });
  }

  return { request, close: () => dispatcher.close() };
}
