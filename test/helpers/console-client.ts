// Small clients for the console's integration tests: fetch with device headers, and raw request targets.
import { request } from 'node:http';
import { DESKTOPS } from './user-agents.js';

export const DESKTOP_HEADERS = { 'user-agent': DESKTOPS.chromeLinux, 'sec-ch-ua-mobile': '?0' };

export function consoleSearch(base: string, what: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${base}/console/v2/contacts/search?what=${encodeURIComponent(what)}`, {
    headers: { ...DESKTOP_HEADERS, ...headers },
  });
}

/** Sends `target` exactly as written: fetch would resolve dot segments before sending. */
export function rawRequest(
  base: string,
  method: string,
  target: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, method, path: target, headers: DESKTOP_HEADERS },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}
