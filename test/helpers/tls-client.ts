// HTTPS requests for the TLS tests: node:https with the test CA, an optional client certificate and agent, and the
// answer read whole; and curl, as a PBX or a shell would call the gateway.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request, type Agent } from 'node:https';
import type { TLSSocket } from 'node:tls';

export interface TlsAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** SHA-256 fingerprint of the certificate the server presented (`AB:CD:…`). */
  serverFingerprint: string;
  socket: TLSSocket;
}

export interface TlsRequest {
  ca: string;
  /** Paths of the client certificate and key. */
  cert?: string;
  key?: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Default: a fresh connection per request. */
  agent?: Agent | false;
}

export function httpsRequest(url: string, options: TlsRequest): Promise<TlsAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: options.method ?? 'GET',
        ca: readFileSync(options.ca),
        ...(options.cert ? { cert: readFileSync(options.cert), key: readFileSync(options.key!) } : {}),
        headers: options.headers,
        agent: options.agent ?? false,
      },
      (res) => {
        // Read now: a kept-alive socket goes back to its agent when the answer ends.
        const socket = res.socket as TLSSocket;
        const serverFingerprint = socket.getPeerX509Certificate()?.fingerprint256 ?? '';
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          resolve({
            status: res.statusCode!,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
            serverFingerprint,
            socket,
          });
        });
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** curl's status and body; `args` before the URL (`--cert`, `-H`, …). */
export function curl(url: string, args: string[]): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    execFile('curl', ['-sS', '-w', '\n%{http_code}', ...args, url], { timeout: 10_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`curl failed: ${stderr || err.message}`));
      const cut = stdout.lastIndexOf('\n');
      resolve({ status: Number(stdout.slice(cut + 1)), body: stdout.slice(0, cut) });
    });
  });
}

/** A client-credentials grant by curl at `url` (a token endpoint): with `secret` in the form, else by the certificate. */
export function curlGrant(
  url: string,
  options: { ca: string; clientId: string; secret?: string; cert?: { cert: string; key: string } },
): Promise<{ status: number; body: string }> {
  return curl(url, [
    '--cacert',
    options.ca,
    ...(options.cert ? ['--cert', options.cert.cert, '--key', options.cert.key] : []),
    '-d',
    'grant_type=client_credentials',
    '-d',
    `client_id=${options.clientId}`,
    ...(options.secret === undefined ? [] : ['-d', `client_secret=${options.secret}`]),
  ]);
}
