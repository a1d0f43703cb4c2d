// The narrow HTTP port the upstream clients use, so Node can plug in a pooled keep-alive client and
// Workers plain fetch. Bodies are strings: the search body is passed through and cached unparsed.
import { declaredTooLarge, readWithin } from '../base/bounded-body.js';
import type { UpstreamOutcome } from '../observability/telemetry.js';

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

/** `too_large`: the answer passed UPSTREAM_MAX_BODY_BYTES and was not read further. */
export type TransportFailure = 'timeout' | 'network' | 'too_large';

/** The metric outcome of a transport failure: an oversized answer is an unusable one. */
export const transportOutcome = (kind: TransportFailure): UpstreamOutcome =>
  kind === 'too_large' ? 'malformed' : kind;

/** Default UPSTREAM_MAX_BODY_BYTES. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

export function tooLarge(maxBodyBytes: number): UpstreamTransportError {
  return new UpstreamTransportError('too_large', `answer larger than ${maxBodyBytes} bytes (UPSTREAM_MAX_BODY_BYTES)`);
}

/** Collects a body as text, failing at the first chunk that takes it past `maxBytes` (the rest is never read). */
async function readBounded(chunks: AsyncIterable<Uint8Array>, maxBytes: number): Promise<string> {
  const bytes = await readWithin(chunks, maxBytes);
  if (bytes === null) throw tooLarge(maxBytes);
  return new TextDecoder().decode(bytes);
}

export class UpstreamTransportError extends Error {
  readonly kind: TransportFailure;
  constructor(kind: TransportFailure, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UpstreamTransportError';
    this.kind = kind;
  }
}

/** An {@link UpstreamHttp} over a WHATWG `fetch` (Workers; tests; Node when measured to be enough). */
export function createFetchHttp(fetchFn: typeof fetch, options: { maxBodyBytes?: number } = {}): UpstreamHttp {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
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
        if (declaredTooLarge(res.headers.get('content-length'), maxBodyBytes)) {
          await res.body?.cancel();
          throw tooLarge(maxBodyBytes);
        }
        const body =
          res.body === null
            ? ''
            : await readBounded(res.body as unknown as AsyncIterable<Uint8Array>, maxBodyBytes).catch(
                async (err: unknown) => {
                  await res.body?.cancel().catch(() => undefined);
                  throw err;
                },
              );
        return {
          status: res.status,
          contentType: res.headers.get('content-type'),
          body,
          retryAfter: res.headers.get('retry-after'),
        };
      } catch (err) {
        if (err instanceof UpstreamTransportError) throw err;
        if (signal.aborted) {
          throw new UpstreamTransportError('timeout', `no answer within ${req.timeoutMs} ms`, { cause: err });
        }
        throw new UpstreamTransportError('network', 'connection failed', { cause: err });
      }
    },
  };
}
