// The Hono environment of the gateway app: the context variables every handler can read, typed once.

export interface AppVariables {
  requestId: string;
  /** The internal client of a verified gateway token. */
  clientId: string;
}

export interface AppEnv {
  Variables: AppVariables;
}
