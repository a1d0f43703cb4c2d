// Helpers for the PBX-facing routes: HTTP Basic credentials of a registered client, and the CNAM route.
import { CLIENTS, type ClientName, type Stack } from './stack.js';

/** `Authorization: Basic ...` for a client id and secret (RFC 7617, UTF-8). */
export function basicAuth(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${id}:${secret}`, 'utf8').toString('base64')}`;
}

export const basicOf = (client: ClientName): string => basicAuth(client, CLIENTS[client]);

export interface CnamAnswer {
  status: number;
  name: string;
  result: string | null;
  headers: Headers;
  ms: number;
}

/** GET /v2/contacts/cnam?what= with the given Authorization (default: the pbx client's Basic credentials). */
export async function cnam(
  stack: Stack,
  what: string | undefined,
  init: { authorization?: string; prefer?: string } = {},
): Promise<CnamAnswer> {
  const headers: Record<string, string> = { authorization: init.authorization ?? basicOf('pbx') };
  if (init.prefer !== undefined) headers.prefer = init.prefer;
  const query = what === undefined ? '' : `?what=${encodeURIComponent(what)}`;
  const started = performance.now();
  const res = await fetch(`${stack.gateway.url}/v2/contacts/cnam${query}`, { headers });
  const name = await res.text();
  return {
    status: res.status,
    name,
    result: res.headers.get('cnam-result'),
    headers: res.headers,
    ms: performance.now() - started,
  };
}
