// The Hono environment of the gateway app: the context variables every handler can read, typed once.
import type { LookupNote } from '../search/search-outcome.js';
import type { Span } from '../observability/tracing/span.js';

interface AppVariables {
  requestId: string;
  /** The internal client of a verified gateway token. */
  clientId: string;
  lookup: LookupNote;
  /** The request's server span (or only the caller's trace context, with tracing off). */
  span: Span;
}

export interface AppEnv {
  Variables: AppVariables;
}
