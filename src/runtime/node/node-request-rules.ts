// Node's listeners apply the request rules (request/request-rules.ts) before the Hono adapter or the search door sees
// a request, so a refusal is the gateway's own on every route and listener: problem+json with a request id, one log
// line and one count, `Connection: close` where a body was not read. The HTTP server's own refusals (a malformed
// request, headers over 16 KiB, a client too slow with its headers or body, an `Expect` other than `100-continue`,
// `CONNECT`) are answered the same way; a client that closed its connection mid-request is recorded (499), unanswered.
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { GatewayError, problemAnswer, type ProblemAnswer } from '../../base/errors.js';
import type { RequestRecorder } from '../../observability/request-recorder.js';
import { closeServerSpan, finishedRequest, openServerSpan, takesTraceId } from '../../observability/served-request.js';
import { UNMATCHED_ROUTE } from '../../observability/telemetry.js';
import { requestIdOf, type RequestParts } from '../../request/request-parts.js';
import { hostIsValid, requestRefusal, type RequestRules } from '../../request/request-rules.js';
import { nodeArrival, type NodeTracing } from './node-spans.js';

export type Listener = (req: IncomingMessage, res: ServerResponse) => void;

export interface NodeRulesOptions {
  rules: RequestRules;
  record: RequestRecorder;
  /** The route template a refused request was for (`unmatched` when none). */
  routeOf: (method: string, path: string) => string;
  /** Each refusal's server span, as the app's answers have theirs: the caller's trace, its id in the problem body. */
  tracing: NodeTracing;
}

// Node keeps only the first of a repeated field of these; the Fetch API, and so the app, reads them all.
const FIRST_ONLY = new Set(['authorization', 'host']);

/** A header field as the Fetch API reads it: every occurrence, joined with ", ". */
function fieldOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  if (value === undefined || !FIRST_ONLY.has(name)) return Array.isArray(value) ? value.join(', ') : value;
  let joined: string | undefined;
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const field = raw[i]!;
    if (field.length === name.length && field.toLowerCase() === name)
      joined = joined === undefined ? raw[i + 1] : `${joined}, ${raw[i + 1]}`;
  }
  return joined;
}

/** The raw request's parts as runtime-neutral code reads them: one small object per request, its methods shared. */
export interface NodeParts extends RequestParts {
  req: IncomingMessage;
}

function header(this: NodeParts, name: string): string | undefined {
  return fieldOf(this.req, name);
}

function peerAddress(this: NodeParts): string | undefined {
  return this.req.socket.remoteAddress;
}

const partsOf = (req: IncomingMessage): NodeParts => ({
  method: req.method ?? 'GET',
  target: req.url ?? '/',
  httpVersion: req.httpVersion,
  req,
  header,
  peerAddress,
});

/** A header field of a request the rules let through: no repeated `Host` or `Authorization` is left to look for. */
function ruledHeader(this: NodeParts, name: string): string | undefined {
  const value = this.req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The parts of a request the rules let through (Node's search door): its fields read without the raw list. */
export const ruledPartsOf = (req: IncomingMessage): NodeParts => ({
  method: req.method ?? 'GET',
  target: req.url ?? '/',
  req,
  header: ruledHeader,
  peerAddress,
});

/** Where a refusal is written: the request's response, or the socket of a request Node handed over (or never read). */
type AnswerWriter = (answer: ProblemAnswer, body: string) => void;

const headersOf = (answer: ProblemAnswer, body: string): Record<string, string> => ({
  ...answer.headers,
  'content-length': String(Buffer.byteLength(body)),
});

const toResponse =
  (res: ServerResponse): AnswerWriter =>
  (answer, body) => {
    res.writeHead(answer.status, headersOf(answer, body));
    res.end(body);
  };

/** Writes an answer on a bare socket and closes it (Node writes a bare status line there otherwise). */
const toSocket =
  (socket: Duplex): AnswerWriter =>
  (answer, body) => {
    const head = Object.entries(headersOf(answer, body)).map(([name, value]) => `${name}: ${value}\r\n`);
    socket.end(`HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status]}\r\n${head.join('')}\r\n${body}`);
  };

/** A refused request as its answer needs it: its parts, the listener's address (the span's) and where to write. */
interface Refused {
  parts: RequestParts;
  localAddress: string | undefined;
  /** Undefined where no one reads an answer (the client closed its connection): the refusal is only recorded. */
  write: AnswerWriter | undefined;
}

/** Answers a refusal the app never saw, with its span, and records it as the app records its answers. */
function answerRefusal(refused: Refused, answer: ProblemAnswer, options: NodeRulesOptions) {
  const started = performance.now();
  const { parts } = refused;
  const route = options.routeOf(parts.method, parts.target.split('?', 1)[0]!);
  // A Host the rules refuse is never recorded: the span names the listener's own address instead.
  const host = parts.header('host');
  const arrival = nodeArrival(
    options.tracing,
    hostIsValid(host) && host !== undefined ? undefined : (refused.localAddress ?? ''),
  );
  const span = openServerSpan(
    options.tracing.tracer,
    parts,
    route === UNMATCHED_ROUTE ? undefined : route,
    arrival,
    parts,
  );
  const answered = { requestId: answer.headers['x-request-id']!, status: answer.status };
  const problem = takesTraceId(span, answer.headers['content-type']) ? answer.body : undefined;
  refused.write?.(answer, closeServerSpan(span, answered, problem) ?? answer.body);
  options.record(finishedRequest(parts, route, answered, performance.now() - started, span));
}

/** A request Node read whole (its head): answered on its response, or on its socket where Node hands that over. */
const refusedRequest = (req: IncomingMessage, write: AnswerWriter): Refused => ({
  parts: partsOf(req),
  localAddress: req.socket.localAddress,
  write,
});

const answerOf = (err: GatewayError, req: IncomingMessage): ProblemAnswer =>
  problemAnswer(err.code, err.message, requestIdOf(fieldOf(req, 'x-request-id')), err.headers, err.extensions);

/**
 * The answer each connection last began, by its socket, for the HTTP server's own refusals: in flight while it holds
 * the socket (Node lets go of it when the answer is sent); none between two requests of a kept-alive connection.
 */
export class AnswersInFlight {
  readonly #answers = new WeakMap<Duplex, ServerResponse>();

  began(req: IncomingMessage, res: ServerResponse): void {
    this.#answers.set(req.socket, res);
  }

  on(socket: Duplex): ServerResponse | undefined {
    const answer = this.#answers.get(socket);
    return answer?.socket === socket ? answer : undefined;
  }
}

/** The listener behind the rules: a request that breaks one is answered here, every other one goes on to `next`. */
export function withRequestRules(next: Listener, options: NodeRulesOptions, answers: AnswersInFlight): Listener {
  return function requestRules(req, res) {
    answers.began(req, res);
    const parts = partsOf(req);
    const refused = requestRefusal(parts, options.rules);
    if (refused === undefined) next(req, res);
    else answerRefusal(refusedRequest(req, toResponse(res)), answerOf(refused, req), options);
  };
}

/**
 * `Expect: 100-continue`: a body that breaks the rules (one the route does not take, or over its bound) is refused
 * before the `100 Continue` that would invite the upload; otherwise the client gets the 100 and the request goes on.
 */
export function answerExpectContinue(
  server: Server,
  next: Listener,
  options: NodeRulesOptions,
  answers: AnswersInFlight,
) {
  const listener = withRequestRules(next, options, answers);
  server.on('checkContinue', function checkContinue(req: IncomingMessage, res: ServerResponse) {
    if (requestRefusal(partsOf(req), options.rules) === undefined) res.writeContinue();
    listener(req, res);
  });
}

/**
 * `Expect` other than `100-continue` (Node answers a bare 417 otherwise): refused as the rules would refuse the
 * request, else with 417, before the app sees it.
 */
export function answerExpectation(server: Server, options: NodeRulesOptions) {
  server.on('checkExpectation', function checkExpectation(req: IncomingMessage, res: ServerResponse) {
    const refused =
      requestRefusal(partsOf(req), options.rules) ??
      new GatewayError('expectation_failed', 'The only expectation understood is "Expect: 100-continue".', {
        headers: { connection: 'close' },
      });
    answerRefusal(refusedRequest(req, toResponse(res)), answerOf(refused, req), options);
  });
}

/** `CONNECT` (Node hands the socket over, or closes it unanswered): the gateway is no proxy and opens no tunnel. */
export function answerConnect(server: Server, options: NodeRulesOptions) {
  server.on('connect', function connect(req: IncomingMessage, socket: Duplex) {
    const refused = new GatewayError('bad_request', 'CONNECT opens a tunnel through a proxy; this gateway is none.', {
      headers: { connection: 'close' },
    });
    answerRefusal(refusedRequest(req, toSocket(socket)), answerOf(refused, req), options);
  });
}

/** The method of a request the parser could not read: the metrics' label for any method outside the known set. */
const UNKNOWN_METHOD = 'OTHER';

/** What the HTTP server refuses before a request is whole, by the parser's (or the socket's) error code. */
function serverRefusal(code: string | undefined): GatewayError {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return new GatewayError('request_timeout', 'The request was not received within the time allowed.');
  if (code === 'HPE_HEADER_OVERFLOW')
    return new GatewayError('header_fields_too_large', 'The request header fields are larger than 16 KiB.');
  // The connection ended (or was reset) mid-request: the client is gone, or at least done sending.
  if (code === 'HPE_INVALID_EOF_STATE' || code === 'ECONNRESET')
    return new GatewayError('client_closed_request', 'The client closed its connection before its request was whole.');
  return new GatewayError('bad_request', 'The request is not well-formed HTTP/1.1.');
}

/** A request the HTTP parser could not read: nothing of it is known but the connection's addresses. */
const unreadPartsOf = (socket: Duplex & { remoteAddress?: string }): RequestParts => ({
  method: UNKNOWN_METHOD,
  target: '/',
  header: () => undefined,
  peerAddress: () => socket.remoteAddress,
});

/**
 * The HTTP server's own refusals (Node writes a bare status line otherwise): problem+json and the connection closed,
 * as Node would, only while no answer has begun on it and someone may read it (not to a client that closed its
 * connection). One the app has not seen is recorded as `unmatched` (nothing of it can be trusted) and, with tracing
 * on, is the first span of a trace of its own. One the app is reading (a body too slow, or cut short) fails the
 * app's read with this refusal, so the app records and traces it, with this status, when its handler ends.
 */
export function answerClientErrors(server: Server, options: NodeRulesOptions, answers: AnswersInFlight): void {
  server.on('clientError', function clientError(err: NodeJS.ErrnoException, socket: Duplex & Partial<Socket>) {
    const inFlight = answers.on(socket);
    const refused = serverRefusal(err.code);
    const readable = socket.writable && !inFlight?.headersSent && refused.code !== 'client_closed_request';
    const write = readable ? toSocket(socket) : undefined;
    const answer = problemAnswer(refused.code, refused.message, requestIdOf(undefined), { connection: 'close' });
    if (inFlight === undefined) {
      // A reset between requests (a client dropping an idle connection) ends no request: nothing to record.
      if (err.code !== 'ECONNRESET')
        answerRefusal({ parts: unreadPartsOf(socket), localAddress: socket.localAddress, write }, answer, options);
    } else {
      write?.(answer, answer.body);
      // After the answer: destroying the request destroys its socket too.
      inFlight.req.destroy(refused);
    }
    socket.destroy();
  });
}
