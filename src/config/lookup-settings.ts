// What one lookup does (docs/configuration.md, "Cache", "CNAM"): the default region of a national number, the
// per-process cache and the shared tier's entry bound, the CNAM route's deadline and text, the batch's size.
import { isSupportedCountry, type CountryCode } from 'libphonenumber-js/min';
import * as z from 'zod/mini';
import { int, setting, text } from './settings-table.js';

const region = z.optional(
  z.pipe(
    text(
      z.toUpperCase(),
      z.refine((v) => isSupportedCountry(v), 'must be an ISO 3166-1 alpha-2 region known to libphonenumber, e.g. CH'),
    ),
    z.transform((v) => v as CountryCode),
  ),
);

export const LOOKUP_SETTINGS = {
  defaultRegion: setting('DEFAULT_REGION', region),
  cache: {
    maxBytes: setting('CACHE_MAX_BYTES', int(1024, 16 * 1024 ** 3, 64 * 1024 ** 2)),
    ttlSeconds: setting('CACHE_TTL_SECONDS', int(0, 31_536_000, 86_400)),
    negativeTtlSeconds: setting('CACHE_NEGATIVE_TTL_SECONDS', int(0, 31_536_000, 3_600)),
    staleWhileRevalidateSeconds: setting('CACHE_STALE_WHILE_REVALIDATE_SECONDS', int(0, 86_400, 300)),
    staleIfErrorSeconds: setting('CACHE_STALE_IF_ERROR_SECONDS', int(0, 31_536_000, 86_400)),
  },
  sharedCache: {
    /** Larger answers are kept per process only, never written to the shared tier. */
    maxEntryBytes: setting('CACHE_SHARED_MAX_ENTRY_BYTES', int(1024, 64 * 1024 ** 2, 256 * 1024)),
  },
  // While the phone rings (docs/pbx.md): the CNAM route's deadline, the plain-text caller name, batches.
  cnam: {
    /** A ringing phone's wait, not the upstream's: shorter than UPSTREAM_TIMEOUT_MS by default. */
    deadlineMs: setting('CNAM_DEADLINE_MS', int(0, 60_000, 1000)),
    maxLength: setting('CNAM_MAX_LENGTH', int(1, 255, 15)),
    fallback: setting(
      'CNAM_FALLBACK',
      z._default(
        z
          .string()
          .check(z.refine((v) => /^[\x20-\x7e]{0,64}$/.test(v), 'must be at most 64 printable ASCII characters')),
        '',
      ),
    ),
  },
  batch: { maxNumbers: setting('BATCH_MAX_NUMBERS', int(1, 1000, 100)) },
};
