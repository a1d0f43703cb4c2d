// The HTTP servers of the Node gateway (the API's and the metrics listener), built alike: the header and body
// timeouts, a connection cap, and the request rules applied before anything reads the request; Node's own refusals
// (a malformed request, an unknown expectation, CONNECT) answered as the rules answer theirs.
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { createServer as createHttpsServer } from 'node:https';
import type { TlsOptions } from 'node:tls';
import { socketCertificate } from './tls-peer-certificate.js';
import type { Config } from '../../config/config.js';
import {
  answerClientErrors,
  answerConnect,
  answerExpectation,
  answerExpectContinue,
  AnswersInFlight,
  withRequestRules,
  type Listener,
  type NodeRulesOptions,
} from './node-request-rules.js';

export interface ListenerOptions extends NodeRulesOptions {
  http: Pick<Config['http'], 'headersTimeoutSeconds' | 'requestTimeoutSeconds'>;
  maxConnections: number;
  /** Set: the listener speaks HTTPS with these options (tls-files.ts), and a handshake must end within the header timeout. */
  tls?: TlsOptions;
}

export function createListener(next: Listener, options: ListenerOptions): Server {
  const answers = new AnswersInFlight();
  const serverOptions = {
    // A client trickling its headers or body is cut (408) at these bounds instead of Node's 300 s; Node
    // checks them every second instead of every 30 s, so the bounds hold to about a second.
    headersTimeout: options.http.headersTimeoutSeconds * 1000,
    requestTimeout: options.http.requestTimeoutSeconds * 1000,
    connectionsCheckingInterval: 1000,
    // The request rules refuse an HTTP/1.1 request without Host, as every refusal: Node's own would be a bare 400.
    requireHostHeader: false,
  };
  const handler = withRequestRules(next, options, answers);
  const server = options.tls
    ? tlsListener(
        createHttpsServer(
          { ...serverOptions, ...options.tls, handshakeTimeout: serverOptions.headersTimeout },
          handler,
        ),
        options.tls.requestCert === true,
      )
    : createServer(serverOptions, handler);
  answerExpectContinue(server, next, options, answers);
  answerExpectation(server, options);
  answerConnect(server, options);
  answerClientErrors(server, options, answers);
  server.on(options.tls ? 'secureConnection' : 'connection', peerReadAtOnce);
  // Connections beyond the cap are closed as they arrive.
  server.maxConnections = options.maxConnections;
  return server;
}

/**
 * Reads a new connection's peer address once. Node keeps it on the socket the first time anyone asks (a property the
 * socket does not have before), and the gateway asks only for a span it records: at a sampling ratio below 1 the
 * sockets would take that property at different points of their lives, end in several shapes, and turn Node's own
 * write path, which every answer crosses, megamorphic (`bench/results/2026-11-28-sampled-socket-shapes.md`). Asked
 * here, every socket takes it at the same point.
 */
function peerReadAtOnce(socket: Socket): void {
  void socket.remoteAddress;
}

/**
 * A handshake that fails (a plain-HTTP request, a stalled or refused handshake) closes its connection: nothing was
 * read that an answer could be written in. Node's HTTPS server would report it as a malformed HTTP request.
 */
function tlsListener(server: ReturnType<typeof createHttpsServer>, requestCert: boolean): Server {
  server.removeAllListeners('tlsClientError');
  server.on('tlsClientError', (_err, socket) => socket.destroy());
  // Read as the handshake ends: OpenSSL lets go of the chain the client sent once the connection carries requests.
  if (requestCert) server.on('secureConnection', (socket) => void socketCertificate(socket));
  return server as unknown as Server;
}
