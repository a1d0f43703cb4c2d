// `Expect: 100-continue` on Node: a client that asks before sending its body is told 413 at once when the body it
// declares is over the bound, without the `100 Continue` that would invite the upload; otherwise it gets the 100
// and the request goes to the app as usual.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { problemAnswer, type ProblemAnswer } from '../../errors.js';
import {
  declaresUnwantedBody,
  requestIdOf,
  tooLargeMessage,
  unwantedBodyAnswer,
  type BodyBoundOf,
} from '../../request/request-parts.js';

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

export function answerExpectContinue(server: Server, listener: Listener, boundOf: BodyBoundOf): void {
  server.on('checkContinue', function checkContinue(req: IncomingMessage, res: ServerResponse) {
    const refused = refusalOf(req, boundOf);
    if (refused !== undefined) {
      refused.headers['content-length'] = String(Buffer.byteLength(refused.body));
      res.writeHead(refused.status, refused.headers);
      res.end(refused.body);
      return;
    }
    res.writeContinue();
    listener(req, res);
  });
}

/** The 413 a body announced with `Expect: 100-continue` earns before it is sent, as the app would answer it. */
function refusalOf(req: IncomingMessage, boundOf: BodyBoundOf): ProblemAnswer | undefined {
  const id = req.headers['x-request-id'];
  const requestId = requestIdOf(typeof id === 'string' ? id : undefined);
  const declared = req.headers['content-length'];
  if (declaresUnwantedBody(req.method ?? 'GET', declared, req.headers['transfer-encoding']))
    return unwantedBodyAnswer(requestId);
  const bound = boundOf((req.url ?? '/').split('?', 1)[0]!);
  if (!(Number(declared) > bound)) return undefined;
  return problemAnswer('payload_too_large', tooLargeMessage(bound), requestId, { connection: 'close' });
}
