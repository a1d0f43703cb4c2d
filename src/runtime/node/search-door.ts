// Node's door of the search's JSON renderer (operations/search/search-json.ts), behind the request rules and in front
// of the Hono listener: a search is handed to the renderer as the raw request's parts and its answer written straight
// to the socket, without the Fetch API objects (the profiles showed those cost more than the lookup itself on a hit,
// and a third of a miss's CPU). Everything else, and any search the renderer does not take this way, goes through the
// app unchanged.
import type { ServerResponse } from 'node:http';
import { LRUCache } from 'lru-cache';
import { whenSettled } from '../../base/eventually.js';
import { closeServerSpan, finishedRequest, openServerSpan, takesTraceId } from '../../observability/served-request.js';
import type { Span } from '../../observability/tracing/span.js';
import { SEARCH_ROUTE, type SearchJsonAnswer } from '../../operations/search/search-json.js';
import type { Services } from '../../services/services.js';
import { nodeArrival } from './node-spans.js';
import type { CertificateReader } from './node-certificates.js';
import { ruledPartsOf, type Listener, type NodeParts } from './node-request-rules.js';

/** The services the door answers with: the JSON renderer, the recorder, the tracer and TRUST_PROXY_HOPS (the span's client). */
type DoorServices = Pick<Services, 'searchJson' | 'recordRequest' | 'tracing' | 'config'>;

/** `certificateOf`: the request's client certificate, where the gateway reads one (node-certificates.ts). */
export function withSearchDoor(
  listener: Listener,
  services: DoorServices,
  certificateOf?: CertificateReader,
): Listener {
  const { searchJson, recordRequest: record } = services;
  const { tracer } = services.tracing;
  const arrival = nodeArrival({ tracer, trustProxyHops: services.config.trustProxyHops });
  const encoded = createEncodedBodies();

  /** Writes the answer; a fresh hit's body as its kept bytes (any other may never be asked again). */
  function send(res: ServerResponse, parts: NodeParts, started: number, span: Span, answer: SearchJsonAnswer): void {
    const problem = closeServerSpan(
      span,
      answer,
      takesTraceId(span, answer.headers['content-type']) ? answer.body : undefined,
    );
    if (problem !== undefined) {
      answer.body = problem;
      answer.bodyBytes = undefined;
    }
    answer.headers['content-length'] = String(answer.bodyBytes ?? Buffer.byteLength(answer.body));
    res.writeHead(answer.status, answer.headers);
    res.end(answer.fresh && answer.bodyBytes !== undefined ? encoded.of(answer.body, answer.bodyBytes) : answer.body);
    record(finishedRequest(parts, SEARCH_ROUTE, answer, performance.now() - started, span));
  }

  return function searchDoor(req, res) {
    if (!searchJson.takes(req.method, req.url)) {
      listener(req, res);
      return;
    }
    const started = performance.now();
    const parts = ruledPartsOf(req);
    if (certificateOf !== undefined) parts.peerCertificate = () => certificateOf(req);
    const span = openServerSpan(tracer, parts, SEARCH_ROUTE, arrival, parts);
    // The renderer turns every failure into an answer; should writing a later one fail, the connection goes.
    void whenSettled(
      searchJson.answer(parts, span),
      (answer) => send(res, parts, started, span, answer),
      () => {
        span.end();
        res.destroy();
      },
    );
  };
}

/** What the encoded bodies of recent answers may hold in all, and the largest body kept. */
const ENCODED_BODIES_MAX_BYTES = 8 * 1024 * 1024;
const ENCODED_BODY_MAX_BYTES = 64 * 1024;
const BYTES_OVERHEAD = 200;

/**
 * The UTF-8 bytes of cached answers' bodies, by body. Node encodes a string body character by character on every
 * write (about a microsecond for the bench's 1.1 KiB answer, 13 % of a hit's instructions); a cached answer is the
 * same string on every hit, so its bytes are made once and written as they are. Bounded in bytes, the body strings
 * counted too (the cache may have let go of them); a larger body is written as its string.
 */
export function createEncodedBodies(maxBytes = ENCODED_BODIES_MAX_BYTES, maxBodyBytes = ENCODED_BODY_MAX_BYTES) {
  const encoder = new TextEncoder();
  const memo = new LRUCache<string, Uint8Array>({
    maxSize: maxBytes,
    // The bytes, the body string and about what V8 and Node hold per typed array and its own buffer.
    sizeCalculation: (bytes, body) => bytes.byteLength + body.length + BYTES_OVERHEAD,
  });
  return {
    /** The body's bytes (`bodyBytes` long), or the body itself where it is too large to keep. */
    of(body: string, bodyBytes: number): Uint8Array | string {
      if (bodyBytes > maxBodyBytes) return body;
      let bytes = memo.get(body);
      if (bytes === undefined) {
        // Each its own buffer: a slice of Node's shared pool would keep the whole pool alive.
        bytes = encoder.encode(body);
        memo.set(body, bytes);
      }
      return bytes;
    },
    get size() {
      return memo.calculatedSize;
    },
  };
}
