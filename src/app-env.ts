// The Hono environment of the gateway app: the context variables every handler can read, typed once.
import type { CacheResult } from './observability/telemetry.js';

/** What a search route looked up, for the access log: the number (logged only as a keyed hash) and what the cache did. */
export interface LookupNote {
  e164: string;
  cache?: CacheResult;
}

export interface AppVariables {
  requestId: string;
  /** The internal client of a verified gateway token. */
  clientId: string;
  lookup: LookupNote;
}

export interface AppEnv {
  Variables: AppVariables;
}
