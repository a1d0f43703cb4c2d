// The narrow HTTP port the gateway's outgoing calls use (the upstream clients, the trace exporter), so Node can plug
// in a pooled keep-alive client and Workers plain fetch. Answers are strings: the search body is passed through and
// cached unparsed. A request's body is a string or bytes (an export's protobuf batch, sent as the view it is).
import { declaredTooLarge, readWithin } from './bounded-body.js';

export interface UpstreamRequest {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body?: string | Uint8Array<ArrayBuffer>;
  /** The whole exchange, headers and body, must finish within this. */
  timeoutMs: number;
  /**
   * Set: an answer with a Content-Encoding other than identity fails unread (`encoded`), for a caller that asks for
   * `identity` and unpacks nothing (fetch would unpack it, Node's client would give its packed bytes).
   */
  unencoded?: boolean;
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

/**
 * `too_large`: the answer passed the client's `maxBodyBytes` (UPSTREAM_MAX_BODY_BYTES) and was not read further;
 * `encoded`: the request asked for an `unencoded` answer and got an encoded one.
 */
export type TransportFailure = 'timeout' | 'network' | 'too_large' | 'encoded';

/** Default UPSTREAM_MAX_BODY_BYTES. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

export function tooLarge(maxBodyBytes: number): UpstreamTransportError {
  return new UpstreamTransportError('too_large', `answer larger than ${maxBodyBytes} bytes`, { answered: true });
}

/**
 * Why an answer is not read, from its headers (a Headers object's `get`, or a lookup over undici's): a declared
 * length past `maxBodyBytes`, or an encoding the request asked not to get. Undefined: it is read within the bound.
 */
export function refusedAnswer(
  req: UpstreamRequest,
  headers: { get(name: string): string | null },
  maxBodyBytes: number,
): UpstreamTransportError | undefined {
  if (declaredTooLarge(headers.get('content-length'), maxBodyBytes)) return tooLarge(maxBodyBytes);
  if (req.unencoded !== true) return undefined;
  const encoding = headers.get('content-encoding');
  if (encoding !== null && encoding.trim().toLowerCase() !== 'identity') {
    return new UpstreamTransportError('encoded', 'answer with a Content-Encoding', { answered: true });
  }
  return undefined;
}

/** Collects a body as text, failing at the first chunk that takes it past `maxBytes` (the rest is never read). */
async function readBounded(chunks: AsyncIterable<Uint8Array>, maxBytes: number): Promise<string> {
  const bytes = await readWithin(chunks, maxBytes);
  if (bytes === null) throw tooLarge(maxBytes);
  return new TextDecoder().decode(bytes);
}

export class UpstreamTransportError extends Error {
  readonly kind: TransportFailure;
  /**
   * Whether the answer had begun (its status and headers arrived) when the exchange failed: the server then has the
   * request, and a caller that must not send it twice (an export) does not try again.
   */
  readonly answered: boolean;
  constructor(kind: TransportFailure, message: string, options: { cause?: unknown; answered?: boolean } = {}) {
    super(message, { cause: options.cause });
    this.name = 'UpstreamTransportError';
    this.kind = kind;
    this.answered = options.answered ?? false;
  }
}

/** An {@link UpstreamHttp} over a WHATWG `fetch` (Workers; tests; Node when measured to be enough). */
export function createFetchHttp(fetchFn: typeof fetch, options: { maxBodyBytes?: number } = {}): UpstreamHttp {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  return {
    async request(req) {
      const signal = AbortSignal.timeout(req.timeoutMs);
      let answered = false;
      try {
        const res = await fetchFn(req.url, {
          method: req.method,
          headers: req.headers,
          body: req.body,
          signal,
          redirect: 'manual',
        });
        answered = true;
        const refused = refusedAnswer(req, res.headers, maxBodyBytes);
        if (refused !== undefined) {
          await res.body?.cancel();
          throw refused;
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
          throw new UpstreamTransportError('timeout', `no answer within ${req.timeoutMs} ms`, { cause: err, answered });
        }
        throw new UpstreamTransportError('network', 'connection failed', { cause: err, answered });
      }
    },
  };
}
