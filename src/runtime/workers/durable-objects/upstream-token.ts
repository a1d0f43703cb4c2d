// The Durable Object that holds the deployment's upstream token: one named instance per upstream client id, so
// every isolate everywhere shares one token and one login. Thin on purpose: the logic is in token-keeper.ts.
import { DurableObject } from 'cloudflare:workers';
import { systemClock } from '../../../clock.js';
import type { ObtainedToken, SharedToken } from '../../../shared-state/token-store.js';
import { noopTelemetry } from '../../../observability/telemetry.js';
import { createFetchHttp } from '../../../upstream/http.js';
import { createTokenEndpoint } from '../../../upstream/token-endpoint.js';
import { createConsoleLogger } from '../logger.js';
import { readWorkerSettings } from '../settings.js';
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
      // The same login code as the token manager's; its metrics are the isolates' (the object has no registry).
      const endpoint = createTokenEndpoint({ http, ...upstream, clock: systemClock, telemetry: noopTelemetry });
      this.keeper = createTokenKeeper({
        storage: this.ctx.storage,
        clock: systemClock,
        logger: createConsoleLogger(config.log.level),
        login: endpoint.login,
      });
    }
    // The instance is named by the client id: a caller configured with another id must not get this one's token.
    if (clientId !== this.clientId) throw new Error('this token object holds another upstream client id');
    return this.keeper;
  }

  read(clientId: string): Promise<SharedToken | null> {
    return this.keeperFor(clientId).read();
  }

  refresh(clientId: string, wanted: TokenWanted): Promise<TokenRefreshReply> {
    return this.keeperFor(clientId).refresh(wanted);
  }

  dropIfCurrent(clientId: string, generation: number): Promise<boolean> {
    return this.keeperFor(clientId).dropIfCurrent(generation);
  }

  offer(clientId: string, token: ObtainedToken): Promise<SharedToken | null> {
    return this.keeperFor(clientId).offer(token);
  }
}
