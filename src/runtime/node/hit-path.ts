// Puts the search hit path in front of the Hono listener on Node: a fresh cache hit is written straight to
// the socket (the profile showed the Fetch API objects cost more than the lookup itself); everything else,
// and every error, goes through the app unchanged.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestRecorder } from '../../observability/request-recorder.js';
import { SEARCH_ROUTE, type SearchHitPath } from '../../routes/search-hit-path.js';

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

export function withSearchHitPath(listener: Listener, hitPath: SearchHitPath, record: RequestRecorder): Listener {
  return function searchHitPathListener(req, res) {
    const started = performance.now();
    const hit = hitPath(req.method, req.url, req.headers.authorization, req.headers['x-request-id']);
    if (hit === undefined) {
      listener(req, res);
      return;
    }
    hit.headers['content-length'] = String(Buffer.byteLength(hit.body));
    res.writeHead(200, hit.headers);
    res.end(hit.body);
    record({
      requestId: hit.requestId,
      method: 'GET',
      route: SEARCH_ROUTE,
      status: 200,
      elapsedMs: performance.now() - started,
      clientId: hit.clientId,
      lookup: hit.lookup,
    });
  };
}
