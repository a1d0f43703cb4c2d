// The Hono environment of the gateway app: the context variables every handler can read, typed once.
import type { LookupNote } from './observability/request-recorder.js';

interface AppVariables {
  requestId: string;
  /** The internal client of a verified gateway token. */
  clientId: string;
  lookup: LookupNote;
}

export interface AppEnv {
  Variables: AppVariables;
}
