// Raw HTTP/1.1 over a TCP socket, for requests a Fetch client refuses to send (absolute-form targets,
// repeated or oddly encoded names as written, slow trickles) and to see exactly when a server closes.
import { connect, type Socket } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Parses the first response in `text`; undefined while it is incomplete. */
export function parseRawResponse(text: string): RawResponse | undefined {
  const end = text.indexOf('\r\n\r\n');
  if (end === -1) return undefined;
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1]);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const rest = text.slice(end + 4);
  const length = headers['content-length'] === undefined ? undefined : Number(headers['content-length']);
  if (length !== undefined && Buffer.byteLength(rest) < length) return undefined;
  return { status, headers, body: length === undefined ? rest : rest.slice(0, length) };
}

function socketTo(url: string): Socket {
  const { hostname, port } = new URL(url);
  return connect({ host: hostname, port: Number(port) });
}

/** Sends `head` (request line and headers, without the blank line) with `Connection: close` and reads the answer. */
export function rawRequest(base: string, head: string, timeoutMs = 5000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = socketTo(base);
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer within ${timeoutMs} ms: ${JSON.stringify(text.slice(0, 200))}`));
    }, timeoutMs);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
      const res = parseRawResponse(text);
      if (res && res.headers['content-length'] !== undefined) {
        clearTimeout(timer);
        socket.destroy();
        resolve(res);
      }
    });
    socket.on('close', () => {
      clearTimeout(timer);
      const res = parseRawResponse(text);
      if (res) resolve(res);
      else reject(new Error(`connection closed without a complete answer: ${JSON.stringify(text.slice(0, 200))}`));
    });
    socket.on('error', () => undefined);
    socket.write(`${head}\r\nConnection: close\r\n\r\n`);
  });
}

export interface OpenSocket {
  socket: Socket;
  /** Everything received so far. */
  received(): string;
  /** Resolves with the milliseconds since connecting when the server closes the connection. */
  closed: Promise<number>;
}

/** Connects and keeps the socket open for the test to write to at its own pace. */
export function openSocket(base: string): Promise<OpenSocket> {
  return new Promise((resolve, reject) => {
    const socket = socketTo(base);
    const started = performance.now();
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', () => undefined);
    const closed = new Promise<number>((done) => socket.once('close', () => done(performance.now() - started)));
    socket.once('connect', () => resolve({ socket, received: () => text, closed }));
    socket.once('error', reject);
  });
}
