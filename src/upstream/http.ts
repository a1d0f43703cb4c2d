// The narrow HTTP port the upstream clients use, so Node can plug in a pooled keep-alive client and
// Workers plain fetch. Bodies are strings: the search body is passed through and cached unparsed.

export interface UpstreamRequest {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** The whole exchange, headers and body, must finish within this. */
  timeoutMs: number;
}

export interface UpstreamResponse {
  status: number;
  contentType: string | null;
  body: string;
  /** The `Retry-After` header, where the runtime's client reads it (a 429 is honoured by it). */
  retryAfter?: string | null;
}

export interface UpstreamHttp {
  /** Resolves with any HTTP status; rejects only with an {@link UpstreamTransportError}. */
  request(req: UpstreamRequest): Promise<UpstreamResponse>;
  close?(): Promise<void>;
}

export type TransportFailure = 'timeout' | 'network';

export class UpstreamTransportError extends Error {
  readonly kind: TransportFailure;
  constructor(kind: TransportFailure, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UpstreamTransportError';
    this.kind = kind;
  }
}

/** An {@link UpstreamHttp} over a WHATWG `fetch` (Workers; tests; Node when measured to be enough). */
export function createFetchHttp(fetchFn: typeof fetch): UpstreamHttp {
  return {
    async request(req) {
      const signal = AbortSignal.timeout(req.timeoutMs);
      try {
        const res = await fetchFn(req.url, {
          method: req.method,
          headers: req.headers,
          body: req.body,
          signal,
          redirect: 'manual',
        });
        const body = await res.text();
        return { status: res.status, contentType: res.headers.get('content-type'), body, retryAfter: res.headers.get('retry-after') };
      } catch (err) {
        if (signal.aborted) {
          throw new UpstreamTransportError('timeout', `no answer within ${req.timeoutMs} ms`, { cause: err });
        }
        throw new UpstreamTransportError('network', 'connection failed', { cause: err });
      }
    },
  };
}
