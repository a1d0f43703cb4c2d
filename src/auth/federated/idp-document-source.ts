// An identity provider's document taken from the copy another process of this place shared (the Cache API of a
// Workers data centre) where that copy is fresh and serves, else fetched from the provider by fetchIdpDocument (its
// bounds, its log line and its count) and shared for as long as it is fresh. Only documents that passed the bounds
// and the caller's reading are shared, and a shared copy is read again the same way before it is taken.
import type { Clock } from '../../base/clock.js';
import { inProcess, type RunInBackground } from '../../shared-state/background.js';
import type { IdpDocumentCopy, IdpDocumentStore } from '../../shared-state/idp-documents.js';
import type { KeySetDocument } from '../../observability/telemetry.js';
import { fetchIdpDocument, type KeySetFetchDeps } from './key-set-fetch.js';

/** A document is fresh for its Cache-Control max-age within these bounds, or the default without one. */
export const KEY_SET_FRESH_MIN_MS = 60_000;
export const KEY_SET_FRESH_MAX_MS = 3_600_000;
export const KEY_SET_FRESH_DEFAULT_MS = 300_000;

export type IdpDocumentDeps = KeySetFetchDeps & {
  clock: Clock;
  /** Copies shared by the processes of one place (Workers: the Cache API); absent: every fetch is this process's. */
  shared?: IdpDocumentStore | undefined;
  /** Where the copy is shared after a fetch (Workers: waitUntil); default in process. */
  background?: RunInBackground | undefined;
};

/** What `read` made of a document, with when the provider answered it and until when it is fresh. */
export interface TakenDocument<T> {
  value: T;
  fetchedAt: number;
  freshUntil: number;
}

type Read<T> = (json: Record<string, unknown>, cacheControl: string | null) => T;

/** Freshness of a document from its Cache-Control, within the bounds. */
export function freshnessOf(cacheControl: string | null): number {
  const maxAge = /(?:^|,)\s*max-age\s*=\s*"?(\d{1,9})"?\s*(?:,|$)/i.exec(cacheControl ?? '')?.[1];
  const noCache = /(?:^|,)\s*(?:no-cache|no-store)\s*(?:,|$)/i.test(cacheControl ?? '');
  const ms = noCache ? 0 : maxAge === undefined ? KEY_SET_FRESH_DEFAULT_MS : Number(maxAge) * 1000;
  return Math.min(KEY_SET_FRESH_MAX_MS, Math.max(KEY_SET_FRESH_MIN_MS, ms));
}

/** What `read` makes of a shared copy still fresh, or undefined (none, past its freshness, or refused by `read`). */
async function sharedCopy<T>(deps: IdpDocumentDeps, url: string, read: Read<T>): Promise<TakenDocument<T> | undefined> {
  const copy = await deps.shared?.get(url).catch(() => undefined);
  if (copy === undefined) return undefined;
  // Never fresh for longer than a fetch could make it, whoever stored the copy.
  const freshUntil = Math.min(copy.freshUntil, copy.fetchedAt + KEY_SET_FRESH_MAX_MS);
  if (deps.clock() >= freshUntil) return undefined;
  try {
    return { value: read(copy.json, copy.cacheControl), fetchedAt: copy.fetchedAt, freshUntil };
  } catch {
    return undefined;
  }
}

function share(
  deps: IdpDocumentDeps,
  at: { issuer: string; document: KeySetDocument; url: string },
  copy: IdpDocumentCopy,
) {
  const { shared, logger } = deps;
  if (shared === undefined) return;
  const put = shared.put(at.url, copy).catch((err: unknown) => {
    const line = { event: 'idp_share_failed', issuer: at.issuer, document: at.document };
    logger.warn(
      { ...line, err: err instanceof Error ? err.message : String(err) },
      'identity provider document not shared',
    );
  });
  (deps.background ?? inProcess)(put);
}

/**
 * The document at `at.url` as `read` makes it (`read` throws a KeySetFetchError for one it refuses): a fresh shared copy
 * for which `serves` says yes, else fetched from the provider (rejecting with a KeySetFetchError) and shared.
 */
export async function takeIdpDocument<T>(
  deps: IdpDocumentDeps,
  at: { issuer: string; index: number; document: KeySetDocument; url: string },
  read: Read<T>,
  serves: (taken: TakenDocument<T>) => boolean = () => true,
): Promise<TakenDocument<T>> {
  const copy = await sharedCopy(deps, at.url, read);
  if (copy !== undefined && serves(copy)) {
    deps.logger.debug({ event: 'idp_shared_copy', issuer: at.issuer, document: at.document }, 'shared copy taken');
    return copy;
  }
  const fetched = await fetchIdpDocument(deps, at, (json, cacheControl) => ({
    json,
    cacheControl,
    value: read(json, cacheControl),
  }));
  const fetchedAt = deps.clock();
  const freshUntil = fetchedAt + freshnessOf(fetched.cacheControl);
  share(deps, at, { json: fetched.json, cacheControl: fetched.cacheControl, fetchedAt, freshUntil });
  return { value: fetched.value, fetchedAt, freshUntil };
}
