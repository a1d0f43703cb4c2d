// HS256 JSON Web Tokens from Hono's JWT helpers, given to the gateway tokens by the app (auth/ imports no framework).
import { decodeHeader, sign, verify } from 'hono/utils/jwt/jwt';
import type { Hs256Jwt } from '../auth/gateway-tokens.js';

export const hs256Jwt: Hs256Jwt = {
  sign: (claims, key) => sign(claims, key, 'HS256'),
  // Only HS256 is accepted, whatever the token's header says; time claims are the caller's (its injected clock).
  verify: (token, key, issuer) => verify(token, key, { alg: 'HS256', iss: issuer, exp: false, nbf: false, iat: false }),
  keyId: (token) => decodeHeader(token).kid,
};
