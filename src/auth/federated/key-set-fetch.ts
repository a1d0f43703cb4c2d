// One fetch of an identity provider's document (its discovery metadata or its JWK set): an https URL (or a loopback
// one, or any http one where the runtime allows it), answered within a time and a size bound, as a JSON object. Each
// fetch is logged in one line and counted, whatever its outcome.
import { declaredTooLarge, readWithin } from '../../base/bounded-body.js';
import type { Logger } from '../../observability/logger.js';
import type { KeySetDocument, KeySetFetchOutcome, Telemetry } from '../../observability/telemetry.js';

/** How long an identity provider has to answer, headers and body. */
const KEY_SET_FETCH_TIMEOUT_MS = 5_000;
/** The largest discovery document or JWK set read; larger ones are refused unread past this. */
export const KEY_SET_MAX_BYTES = 256 * 1024;

export interface KeySetFetchDeps {
  fetch: typeof fetch;
  logger: Logger;
  telemetry: Pick<Telemetry, 'keySetFetch'>;
  /** Whether plain http is allowed for any host (not under NODE_ENV=production); loopback hosts always are. */
  allowHttp: boolean;
}

export class KeySetFetchError extends Error {
  constructor(readonly outcome: KeySetFetchOutcome) {
    super(outcome);
  }
}

const LOOPBACK = /^(?:127(?:\.\d{1,3}){3}|\[::1\]|localhost)$/i;

/** Whether the gateway may fetch from `url`: https, or http to a loopback host or where allowed. */
export function fetchableUrl(url: string, allowHttp: boolean): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.protocol === 'https:') return true;
  return parsed.protocol === 'http:' && (allowHttp || LOOPBACK.test(parsed.hostname));
}

async function bodyOf(res: Response): Promise<Record<string, unknown>> {
  if (res.status !== 200) throw new KeySetFetchError('http_error');
  if (declaredTooLarge(res.headers.get('content-length'), KEY_SET_MAX_BYTES) || res.body === null)
    throw new KeySetFetchError(res.body === null ? 'malformed' : 'too_large');
  const bytes = await readWithin(res.body as unknown as AsyncIterable<Uint8Array>, KEY_SET_MAX_BYTES);
  if (bytes === null) throw new KeySetFetchError('too_large');
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new KeySetFetchError('malformed');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new KeySetFetchError('malformed');
  return value as Record<string, unknown>;
}

function outcomeOf(err: unknown): KeySetFetchOutcome {
  if (err instanceof KeySetFetchError) return err.outcome;
  const name = (err as { name?: unknown } | null)?.name;
  return name === 'TimeoutError' || name === 'AbortError' ? 'timeout' : 'network';
}

/**
 * What `read` makes of the JSON object at `url` and its `Cache-Control`, or a {@link KeySetFetchError} (`read` throws
 * one for a document it refuses); logged and counted once with the outcome.
 */
export async function fetchIdpDocument<T>(
  deps: KeySetFetchDeps,
  at: { issuer: string; index: number; document: KeySetDocument; url: string },
  read: (json: Record<string, unknown>, cacheControl: string | null) => T,
): Promise<T> {
  const { logger, telemetry } = deps;
  const started = Date.now();
  const report = (outcome: KeySetFetchOutcome) => {
    telemetry.keySetFetch(String(at.index), at.document, outcome);
    const line = { event: 'idp_fetch', issuer: at.issuer, document: at.document, outcome, ms: Date.now() - started };
    if (outcome === 'ok') logger.info(line, 'identity provider document fetched');
    else logger.warn(line, 'identity provider document not fetched: the keys held stay');
  };
  let res: Response | undefined;
  try {
    if (!fetchableUrl(at.url, deps.allowHttp)) throw new KeySetFetchError('insecure_url');
    const signal = AbortSignal.timeout(KEY_SET_FETCH_TIMEOUT_MS);
    res = await deps.fetch(at.url, { headers: { accept: 'application/json' }, redirect: 'manual', signal });
    const result = read(await bodyOf(res), res.headers.get('cache-control'));
    report('ok');
    return result;
  } catch (err) {
    await res?.body?.cancel().catch(() => undefined);
    const outcome = outcomeOf(err);
    report(outcome);
    throw new KeySetFetchError(outcome);
  }
}
