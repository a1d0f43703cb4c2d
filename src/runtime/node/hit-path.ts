// Puts the search paths in front of the Hono listener on Node: a fresh cache hit is written straight to the socket,
// and so is the answer of any other search the search path takes (a miss, a stale or shared entry, a lookup that
// failed); the profiles showed the Fetch API objects cost more than the lookup itself on a hit, and a third of a
// miss's CPU. Everything else goes through the app unchanged.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestRecorder } from '../../observability/request-recorder.js';
import { SEARCH_ROUTE, type HitAnswer, type SearchHitPath, type SearchPath } from '../../routes/search-hit-path.js';

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

export function withSearchHitPath(
  listener: Listener,
  hitPath: SearchHitPath,
  record: RequestRecorder,
  searchPath?: SearchPath,
): Listener {
  function send(res: ServerResponse, started: number, status: number, answer: HitAnswer): void {
    answer.headers['content-length'] = String(answer.bodyBytes ?? Buffer.byteLength(answer.body));
    res.writeHead(status, answer.headers);
    res.end(answer.body);
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
      send(res, started, 200, hit);
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
