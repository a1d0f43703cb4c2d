// Puts the search paths in front of the Hono listener on Node: a fresh cache hit is written straight to the socket,
// and so is the answer of any other search the search path takes (a miss, a stale or shared entry, a lookup that
// failed); the profiles showed the Fetch API objects cost more than the lookup itself on a hit, and a third of a
// miss's CPU. Everything else goes through the app unchanged.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LRUCache } from 'lru-cache';
import type { RequestRecorder } from '../../observability/request-recorder.js';
import { SEARCH_ROUTE, type HitAnswer, type SearchHitPath, type SearchPath } from '../../routes/search-hit-path.js';

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

export function withSearchHitPath(
  listener: Listener,
  hitPath: SearchHitPath,
  record: RequestRecorder,
  searchPath?: SearchPath,
): Listener {
  const encoded = createEncodedBodies();

  /** Writes the answer; a hit's body as its kept bytes (a miss's is written as it is: it may never be asked again). */
  function send(res: ServerResponse, started: number, status: number, answer: HitAnswer, hit = false): void {
    answer.headers['content-length'] = String(answer.bodyBytes ?? Buffer.byteLength(answer.body));
    res.writeHead(status, answer.headers);
    res.end(hit && answer.bodyBytes !== undefined ? encoded.of(answer.body, answer.bodyBytes) : answer.body);
    record({
      requestId: answer.requestId,
      method: 'GET',
      route: SEARCH_ROUTE,
      status,
      elapsedMs: performance.now() - started,
      clientId: answer.clientId,
      lookup: answer.lookup,
    });
  }

  return function searchHitPathListener(req, res) {
    const started = performance.now();
    const hit = hitPath(req.method, req.url, req.headers.authorization, req.headers['x-request-id']);
    if (hit !== undefined) {
      send(res, started, 200, hit, true);
      return;
    }
    const searched = searchPath?.({
      method: req.method,
      target: req.url,
      authorization: req.headers.authorization,
      requestId: req.headers['x-request-id'],
      prefer: req.headers.prefer,
      hasBody: req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined,
    });
    if (searched === undefined) {
      listener(req, res);
      return;
    }
    searched.then(
      (answer) => send(res, started, answer.status, answer),
      // The search path turns every lookup failure into an answer; should writing it fail, the connection goes.
      () => res.destroy(),
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
