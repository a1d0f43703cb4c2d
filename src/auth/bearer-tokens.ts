// The one check of a Bearer token, whoever issued it: the gateway's own tokens, then a trusted identity provider's
// (auth/federated/). Every route that takes a Bearer token, Node's search door, revocation and introspection use it
// through the GatewayTokens interface; a token of either kind is accepted only while its client is registered and
// the token is not revoked, checked on every use.
import type { Clock } from '../base/clock.js';
import { FEDERATED_TOKEN_MAX_CHARS, type FederatedTokens } from './federated/federated-tokens.js';
import type { GatewayTokens } from './gateway-tokens.js';

export function withFederatedTokens(own: GatewayTokens, federated: FederatedTokens, clock: Clock): GatewayTokens {
  async function inspect(token: string) {
    // Refused before any parsing: no token the gateway accepts is this long.
    if (token.length > FEDERATED_TOKEN_MAX_CHARS) return null;
    return (await own.inspect(token)) ?? federated.inspect(token);
  }
  return {
    issue: own.issue,
    accepts: own.accepts,
    canCheck: own.canCheck,
    inspect,
    peek(token, now = clock()) {
      const found = own.peek(token, now);
      if (found !== undefined) return found;
      const claims = federated.peek(token, now);
      return claims !== undefined && own.accepts(claims) ? claims : undefined;
    },
    async verify(token) {
      const claims = await inspect(token);
      return claims !== null && own.accepts(claims) ? claims : null;
    },
  };
}
