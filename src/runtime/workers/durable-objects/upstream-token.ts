// The Durable Object that holds the deployment's upstream token: one named instance per upstream client id, so
// every isolate everywhere shares one token and one login. Thin on purpose: the logic is in token-keeper.ts. Its
// login is traced like an isolate's: a client span under the span of the caller it logs in for (the context the
// caller sent), exported by the object's own tracing from the same OTEL_* settings.
import { DurableObject } from 'cloudflare:workers';
import { systemClock } from '../../../base/clock.js';
import type { ObtainedToken, SharedToken } from '../../../shared-state/token-store.js';
import { noopTelemetry } from '../../../observability/telemetry.js';
import { remoteSpan, type TraceCarrier } from '../../../observability/tracing/http-spans.js';
import { createFetchHttp } from '../../../base/upstream-http.js';
import { createTokenEndpoint } from '../../../upstream/token-endpoint.js';
import { createConsoleLogger } from '../workers-logger.js';
import { readWorkerSettings } from '../settings.js';
import { createWorkerTracing } from '../workers-tracing.js';
import type { DurableObjectState, TokenRefreshReply, TokenWanted, UpstreamTokenObjectRpc } from '../bindings.js';
import { createTokenKeeper, type TokenKeeper } from './token-keeper.js';

// A class because the Workers runtime instantiates Durable Objects from an exported class.
export class UpstreamTokenObject extends DurableObject<Record<string, unknown>> implements UpstreamTokenObjectRpc {
  private keeper: TokenKeeper | undefined;
  private clientId = '';

  constructor(ctx: DurableObjectState, env: Record<string, unknown>) {
    super(ctx, env);
  }

  /** Built on first use: the credentials are the Worker's own bindings (secrets), never sent over RPC. */
  private keeperFor(clientId: string): TokenKeeper {
    if (this.keeper === undefined) {
      const { config } = readWorkerSettings(this.env);
      const { upstream } = config;
      this.clientId = upstream.clientId;
      const http = createFetchHttp((input, init) => fetch(input, init));
      const background = (work: Promise<unknown>) => this.ctx.waitUntil(work);
      const tracing = createWorkerTracing(config.tracing, background);
      // The same login code as the token manager's; its metrics are the isolates' (the object has no registry).
      const endpoint = createTokenEndpoint({
        http,
        ...upstream,
        clock: systemClock,
        telemetry: noopTelemetry,
        tracer: tracing.tracer,
      });
      this.keeper = createTokenKeeper({
        storage: this.ctx.storage,
        clock: systemClock,
        logger: createConsoleLogger(config.log.level),
        login: (trace) =>
          // Sent at once, while the object is active (its waitUntil does not extend its life): a login comes once
          // per token lifetime, so no batch would fill, and an idle object may be evicted.
          endpoint.login(remoteSpan(trace)).finally(() => background(tracing.flush())),
      });
    }
    // The instance is named by the client id: a caller configured with another id must not get this one's token.
    if (clientId !== this.clientId) throw new Error('this token object holds another upstream client id');
    return this.keeper;
  }

  read(clientId: string): Promise<SharedToken | null> {
    return this.keeperFor(clientId).read();
  }

  refresh(clientId: string, wanted: TokenWanted, trace?: TraceCarrier): Promise<TokenRefreshReply> {
    return this.keeperFor(clientId).refresh(wanted, trace);
  }

  dropIfCurrent(clientId: string, generation: number): Promise<boolean> {
    return this.keeperFor(clientId).dropIfCurrent(generation);
  }

  offer(clientId: string, token: ObtainedToken): Promise<SharedToken | null> {
    return this.keeperFor(clientId).offer(token);
  }
}
