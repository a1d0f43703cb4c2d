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
  const { status, headers } = parseHead(text.slice(0, end));
  const rest = text.slice(end + 4);
  const length = headers['content-length'] === undefined ? undefined : Number(headers['content-length']);
  if (length !== undefined && Buffer.byteLength(rest) < length) return undefined;
  return { status, headers, body: length === undefined ? rest : rest.slice(0, length) };
}

/** The status and header fields of a response head (without the blank line). */
function parseHead(head: string): { status: number; headers: Record<string, string> } {
  const [statusLine, ...lines] = head.split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1]);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status, headers };
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

/**
 * Sends a request exactly as written (request line, header lines, then `body` if any) with `Connection: close`, and
 * reads its answer: to its declared length, to the close, or (`head`) to the end of the head, as for a HEAD.
 */
export function rawExchange(
  base: string,
  lines: string[],
  body = '',
  head = false,
  timeoutMs = 10_000,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = socketTo(base);
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms: ${JSON.stringify(text.slice(0, 200))}`));
    }, timeoutMs);
    /** The answer once it is whole: its head (for HEAD), its declared length, or everything up to the close. */
    const answer = (closed: boolean): RawResponse | undefined => {
      const end = text.indexOf('\r\n\r\n');
      if (end === -1) return undefined;
      const parsed = parseHead(text.slice(0, end));
      const rest = text.slice(end + 4);
      const length = parsed.headers['content-length'];
      if (head) return { ...parsed, body: rest };
      if (length !== undefined && Buffer.byteLength(rest) >= Number(length)) return { ...parsed, body: rest };
      return closed ? { ...parsed, body: rest } : undefined;
    };
    const done = (res: RawResponse) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(res);
    };
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
      const res = answer(false);
      if (res) done(res);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      const res = answer(true);
      if (res) done(res);
      else {
        clearTimeout(timer);
        reject(new Error(`connection closed without an answer: ${JSON.stringify(text.slice(0, 200))}`));
      }
    });
    socket.write(`${[...lines, 'Connection: close'].join('\r\n')}\r\n\r\n${body}`);
  });
}
