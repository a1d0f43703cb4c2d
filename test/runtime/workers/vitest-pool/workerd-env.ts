// The bindings the workerd tests run the Worker with (beside wrangler.toml's Durable Objects and datasets).

export const WORKERD_UPSTREAM = { clientId: 'workerd-gw', clientSecret: 'workerd-upstream-secret' } as const;
export const WORKERD_CLIENT = { id: 'crm', secret: 'crm-workerd-secret' } as const;
/** The audience and apps of the identity provider the global setup starts (oidc-provider). */
export const WORKERD_IDP = {
  audience: 'https://callerid.test',
  apps: [
    { id: 'crm-app', secret: 'crm-app-workerd-secret-0123' },
    { id: 'stray-app', secret: 'stray-app-workerd-secret-0123' },
  ],
};
/** Hex SHA-256 of WORKERD_CLIENT.secret (`printf %s crm-workerd-secret | sha256sum`), as GATEWAY_CLIENTS takes it. */
const WORKERD_CLIENT_HASH = 'caf08aef5775ac931b2b5091f345430474ee3422196097fe1312702c3068109e';

/**
 * The Worker's tracing settings, which its Durable Objects read as well: export to the tests' OTLP receiver, and
 * record only the traces a caller sampled (parent-based, new traces off), so no test records spans it did not ask
 * for. The gateways control.ts builds leave them out unless a test passes them (`tracingSettings()`).
 */
const tracingBindings = (otlpUrl: string) => ({
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: otlpUrl,
  OTEL_TRACES_SAMPLER: 'parentbased_always_off',
  OTEL_BSP_SCHEDULE_DELAY: '10',
});

export function workerdBindings(simulatorUrl: string, otlpUrl: string): Record<string, string> {
  return {
    ...tracingBindings(otlpUrl),
    UPSTREAM_AUTH_URL: simulatorUrl,
    UPSTREAM_BASE_URL: simulatorUrl,
    UPSTREAM_CLIENT_ID: WORKERD_UPSTREAM.clientId,
    UPSTREAM_CLIENT_SECRET: WORKERD_UPSTREAM.clientSecret,
    GATEWAY_TOKEN_SECRET: 'workerd-test-signing-key-0123456789abcdef',
    GATEWAY_CLIENTS: `${WORKERD_CLIENT.id}:${WORKERD_CLIENT_HASH}`,
    GATEWAY_ADMIN_CLIENTS: WORKERD_CLIENT.id,
    DEFAULT_REGION: 'GB',
    // The host the tests ask the Worker at (control.ts), so standard clients find the issuer they asked.
    PUBLIC_BASE_URL: 'https://callerid.test',
    CONSOLE_PROVIDER: 'swissdir',
    // The isolates' metrics push waits in ctx.waitUntil; tests that wait on the context wait for it too.
    METRICS_PUSH_INTERVAL_SECONDS: '1',
    // Generous: a loaded machine never turns a slow loopback answer into a 504 (no test here times the upstream out).
    UPSTREAM_TIMEOUT_MS: '8000',
    LOG_LEVEL: 'warn',
  };
}
