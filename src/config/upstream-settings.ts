// The upstream's settings (docs/configuration.md, "Upstream"): its addresses and credentials, one bound for a whole
// lookup, how its tokens are read, how big an answer may be.
import * as z from 'zod/mini';
import { httpUrl, int, oneOf, optionalText, setting } from './settings-table.js';

/** The four variables that name the upstream: all four, or none (demo mode, Node only). */
export const UPSTREAM_VARS = ['UPSTREAM_AUTH_URL', 'UPSTREAM_BASE_URL', 'UPSTREAM_CLIENT_ID', 'UPSTREAM_CLIENT_SECRET'];

export const UPSTREAM_SETTINGS = {
  /** The upstream's addresses and credentials: all four, or none (demo mode, Node only). */
  upstream: {
    authUrl: setting('UPSTREAM_AUTH_URL', z.optional(httpUrl)),
    baseUrl: setting('UPSTREAM_BASE_URL', z.optional(httpUrl)),
    clientId: setting('UPSTREAM_CLIENT_ID', optionalText),
    clientSecret: setting('UPSTREAM_CLIENT_SECRET', optionalText),
    /**
     * One bound for a whole upstream lookup (token wait, search, the retry after a 401), hence also the longest a
     * caller waits (the default and the ceiling of `Prefer: wait`) and a miss waits for another replica's fill.
     */
    timeoutMs: setting('UPSTREAM_TIMEOUT_MS', int(50, 60_000, 3000)),
    expiresInUnit: setting('UPSTREAM_TOKEN_EXPIRES_IN_UNIT', oneOf(['seconds', 'milliseconds'], 'seconds')),
    refreshAheadSeconds: setting('UPSTREAM_TOKEN_REFRESH_AHEAD_SECONDS', int(0, 86_400, 300)),
    /** A bigger search or token answer is a 502, and is not read past this many bytes. */
    maxBodyBytes: setting('UPSTREAM_MAX_BODY_BYTES', int(1024, 256 * 1024 ** 2, 1024 ** 2)),
  },
};
