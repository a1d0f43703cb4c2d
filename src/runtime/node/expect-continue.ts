// `Expect: 100-continue` on Node: a client that asks before sending its body is told 413 at once when the body it
// declares is over the bound, without the `100 Continue` that would invite the upload; otherwise it gets the 100
// and the request goes to the app as usual.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { problemFor } from '../../errors.js';
import { tooLargeMessage, type BodyBoundOf } from '../../limits/body-bound.js';

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

export function answerExpectContinue(server: Server, listener: Listener, boundOf: BodyBoundOf): void {
  server.on('checkContinue', function checkContinue(req: IncomingMessage, res: ServerResponse) {
    const declared = Number(req.headers['content-length']);
    const path = (req.url ?? '/').split('?', 1)[0]!;
    const bound = boundOf(path);
    if (Number.isFinite(declared) && declared > bound) {
      const body = JSON.stringify(problemFor('payload_too_large', tooLargeMessage(bound), randomUUID()));
      res.writeHead(413, {
        'content-type': 'application/problem+json',
        'content-length': Buffer.byteLength(body),
        connection: 'close',
      });
      res.end(body);
      return;
    }
    res.writeContinue();
    listener(req, res);
  });
}
