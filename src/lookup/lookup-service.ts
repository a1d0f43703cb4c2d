// The one lookup path shared by the API and the console: an E.164 number in, the upstream's JSON out.
import type { SearchClient } from '../upstream/search-client.js';

export interface LookupResult {
  /** The upstream's JSON, byte for byte. */
  body: string;
  contentType: string;
  /** RFC 9211 `Cache-Status` value, when a cache took part. */
  cacheStatus?: string;
  /** Seconds since the answer was obtained from the upstream (`Age`). */
  ageSeconds?: number;
}

export interface LookupService {
  lookup(e164: string): Promise<LookupResult>;
}

export function createLookupService(deps: { search: SearchClient }): LookupService {
  return {
    async lookup(e164) {
      const { body, contentType } = await deps.search.search(e164);
      return { body, contentType };
    },
  };
}
