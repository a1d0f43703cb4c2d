// The three doors a request can come through, for tests that send the same request to each and compare the
// answers: Node's server over a real socket, the app in process (Fetch API objects, no socket), and the Worker in
// workerd over a socket (when wrangler is installed).
import { startNodeGateway, type RunningGateway } from '../../src/runtime/node/gateway.js';
import type { EnvSource } from '../../src/config/settings-table.js';
import { rawExchange, type RawResponse } from './raw-http.js';
import type { captureLogger } from './recorders.js';
import { wranglerPresent } from './wrangler-dev.js';
import { startWorkerdLike, type WorkerdServe } from './workerd-serve.mjs';

export const NODE_SERVER = "Node's server";
const IN_PROCESS = 'the app in process';
export const WORKERD = 'the Worker in workerd';

/** A request as its header lines are written; `body` is sent as given after them. */
interface DoorRequest {
  method: string;
  target: string;
  lines: string[];
  body?: string | undefined;
}

export interface Door {
  name: string;
  send(request: DoorRequest): Promise<RawResponse>;
}

/** Whether the lines declare a body of their own (`Content-Length` or `Transfer-Encoding`). */
export const declaresBody = (lines: string[]): boolean =>
  lines.some((l) => /^(content-length|transfer-encoding):/i.test(l));

/**
 * A door over a real socket: the request as written, with `Host: localhost` unless its lines have one, and a
 * `Content-Length` for its body unless they declare one.
 */
export const socketDoor = (name: string, base: string): Door => ({
  name,
  send({ method, target, lines, body }) {
    const host = lines.some((l) => /^host:/i.test(l)) ? [] : ['Host: localhost'];
    const length = body !== undefined && !declaresBody(lines) ? [`Content-Length: ${Buffer.byteLength(body)}`] : [];
    return rawExchange(base, [`${method} ${target} HTTP/1.1`, ...host, ...lines, ...length], body, method === 'HEAD');
  },
});

/**
 * The app in process: a Fetch API request with the same fields (repeated ones joined). A Fetch API request carries
 * a body on POST only, and only where its fields declare none: otherwise they say what the body would be.
 */
const inProcessDoor = (gateway: RunningGateway): Door => ({
  name: IN_PROCESS,
  async send({ method, target, lines, body }) {
    const headers = new Headers();
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers.append(line.slice(0, colon), line.slice(colon + 1).trim());
    }
    if (!headers.has('host')) headers.set('host', 'localhost');
    const init: RequestInit = { method, headers };
    if (method === 'POST' && !declaresBody(lines)) init.body = body ?? '';
    const url = target.startsWith('http') ? target : `http://localhost${target}`;
    const res = await gateway.app.fetch(new Request(url, init));
    const out: Record<string, string> = {};
    res.headers.forEach((value, name) => (out[name] = value));
    const text = await res.text();
    if (out['content-length'] === undefined && method !== 'HEAD')
      out['content-length'] = String(Buffer.byteLength(text));
    return { status: res.status, headers: out, body: text };
  },
});

export interface ThreeDoors {
  doors: Door[];
  /** The gateway behind Node's server door. */
  socket: RunningGateway;
  /** The gateway whose app the in-process door calls. */
  inProcess: RunningGateway;
  close(): Promise<void>;
}

interface ThreeDoorsOptions {
  /** What Node's server door's gateway has beside `env`. */
  socketEnv?: EnvSource;
  /** What the in-process door's gateway has beside `env` (the Worker has neither). */
  inProcessEnv?: EnvSource;
  socketLogger: ReturnType<typeof captureLogger>;
  inProcessLogger: ReturnType<typeof captureLogger>;
}

/** The three doors in front of one configuration (`env`); workerd only where wrangler is installed. */
export async function startThreeDoors(env: EnvSource, options: ThreeDoorsOptions): Promise<ThreeDoors> {
  const socket = await startNodeGateway({ ...env, ...options.socketEnv }, { logger: options.socketLogger });
  const inProcess = await startNodeGateway({ ...env, ...options.inProcessEnv }, { logger: options.inProcessLogger });
  const doors = [socketDoor(NODE_SERVER, socket.url), inProcessDoor(inProcess)];
  let worker: WorkerdServe | undefined;
  if (wranglerPresent()) {
    worker = await startWorkerdLike(env);
    doors.push(socketDoor(WORKERD, worker.url));
  }
  return {
    doors,
    socket,
    inProcess,
    async close() {
      await worker?.close();
      await socket.close();
      await inProcess.close();
    },
  };
}
