// The signing keys of one trusted issuer: found by discovery (OpenID Connect, then RFC 8414) unless configured,
// fetched within bounds, kept for as long as the JWK set's Cache-Control says (within bounds), and fetched again on a
// key id not held, never more than once per KEY_SET_REFETCH_MS whatever callers send. While the issuer cannot be
// reached, the keys last fetched keep verifying for KEY_SET_HOLD_MS; a key id they lack is refused. Where processes
// share documents (Workers: the data centre's Cache API), a copy another one fetched stands for a fetch when it is newer
// than the set held, fresh, and for a key id not held, lists it or was fetched within KEY_SET_REFETCH_MS.
import { createLocalJWKSet, type CompactJWSHeaderParameters, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { inProcess } from '../../shared-state/background.js';
import { KeySetFetchError } from './key-set-fetch.js';
import { takeIdpDocument, type IdpDocumentDeps, type TakenDocument } from './idp-document-source.js';
import type { TrustedIssuer } from './trusted-issuers.js';

/** At most one fetch (discovery and key set) per issuer within this long. */
export const KEY_SET_REFETCH_MS = 30_000;
/** How long keys keep verifying after the last successful fetch while the issuer cannot be reached. */
export const KEY_SET_HOLD_MS = 24 * 3_600_000;
/** The most keys a set may hold; a larger one is refused whole. */
export const KEY_SET_MAX_KEYS = 100;

interface HeldKeys {
  select: JWTVerifyGetKey;
  kids: ReadonlySet<string>;
  fetchedAt: number;
  freshUntil: number;
  heldUntil: number;
}

export interface IssuerKeys {
  /** The key to verify a token with this header, fetching the set first where it must and may; undefined: none. */
  keyFor(header: CompactJWSHeaderParameters): Promise<Awaited<ReturnType<JWTVerifyGetKey>> | undefined>;
}

/** The places of an issuer's metadata: OpenID Connect Discovery 1.0 section 4, then RFC 8414 section 3. */
export function discoveryUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/$/, '');
  return [
    `${url.origin}${path}/.well-known/openid-configuration`,
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
  ];
}

function keySetOf(json: Record<string, unknown>): JSONWebKeySet {
  const { keys } = json;
  if (!Array.isArray(keys)) throw new KeySetFetchError('malformed');
  if (keys.length > KEY_SET_MAX_KEYS) throw new KeySetFetchError('too_many_keys');
  return { keys: keys.filter((k): k is JSONWebKeySet['keys'][number] => typeof k === 'object' && k !== null) };
}

const kidsOf = (set: JSONWebKeySet): Set<string> =>
  new Set(set.keys.flatMap((k) => (typeof k.kid === 'string' ? [k.kid] : [])));

export function createIssuerKeys(trusted: TrustedIssuer, deps: IdpDocumentDeps): IssuerKeys {
  const { clock } = deps;
  const at = { issuer: trusted.issuer, index: trusted.index };
  let jwksUri = trusted.jwksUri;
  let held: HeldKeys | undefined;
  let lastAttempt = Number.NEGATIVE_INFINITY;
  let inFlight: Promise<void> | undefined;

  /** The key set's URL from the issuer's metadata, whose `issuer` must be the configured one (OIDC Discovery 4.3). */
  async function discover(): Promise<string> {
    const [oidc, oauth] = discoveryUrls(trusted.issuer);
    const fetchAt = async (url: string) =>
      (await takeIdpDocument(deps, { ...at, document: 'discovery', url }, jwksUriOf)).value;
    return fetchAt(oidc!).catch((err: unknown) => {
      if (err instanceof KeySetFetchError && err.outcome === 'http_error') return fetchAt(oauth!);
      throw err;
    });
  }

  function jwksUriOf(metadata: Record<string, unknown>): string {
    if (metadata.issuer !== trusted.issuer) throw new KeySetFetchError('wrong_issuer');
    if (typeof metadata.jwks_uri !== 'string') throw new KeySetFetchError('malformed');
    return metadata.jwks_uri;
  }

  /** Whether a shared copy stands for a fetch made for `kid` (undefined: for the set's freshness). */
  function serves(copy: TakenDocument<JSONWebKeySet>, kid: string | undefined): boolean {
    if (held !== undefined && copy.fetchedAt <= held.fetchedAt) return false;
    return kid === undefined || kidsOf(copy.value).has(kid) || clock() - copy.fetchedAt < KEY_SET_REFETCH_MS;
  }

  async function fetchKeys(kid: string | undefined): Promise<void> {
    jwksUri ??= await discover();
    const taken = await takeIdpDocument(deps, { ...at, document: 'jwks', url: jwksUri }, keySetOf, (c) =>
      serves(c, kid),
    );
    held = {
      select: createLocalJWKSet(taken.value),
      kids: kidsOf(taken.value),
      fetchedAt: taken.fetchedAt,
      freshUntil: taken.freshUntil,
      heldUntil: taken.fetchedAt + KEY_SET_HOLD_MS,
    };
  }

  /**
   * Fetches the set again (for `kid`, a key id not held) unless a fetch ran within KEY_SET_REFETCH_MS; concurrent
   * callers share one fetch.
   */
  function refresh(kid: string | undefined): Promise<void> {
    const recent = clock() - lastAttempt < KEY_SET_REFETCH_MS;
    // A fetch that never settled (a Worker's work cut off after its answer) is not waited on past the bound.
    if (inFlight && recent) return inFlight;
    if (recent) return Promise.resolve();
    lastAttempt = clock();
    // A failure is logged and counted by the fetch; the keys held stay.
    const current = fetchKeys(kid)
      .catch(() => undefined)
      .finally(() => {
        if (inFlight === current) inFlight = undefined;
      });
    inFlight = current;
    return current;
  }

  async function select(header: CompactJWSHeaderParameters) {
    const now = clock();
    if (held === undefined || now >= held.heldUntil) return undefined;
    try {
      return await held.select(header, { payload: '', signature: '' });
    } catch {
      return undefined;
    }
  }

  return {
    async keyFor(header) {
      const known = held !== undefined && (header.kid === undefined || held.kids.has(header.kid));
      if (!known) await refresh(header.kid);
      // A held key past its freshness verifies now; the set is fetched again behind the answer.
      else if (clock() >= held!.freshUntil) (deps.background ?? inProcess)(refresh(undefined));
      return select(header);
    },
  };
}
