// A trusted issuer's token verified and mapped: `typ` at+jwt or JWT (or none), `iat` required and not ahead by more
// than 60 s, the client named by client_id then azp (or the issuer's own claim), remembered until `exp` and
// forgotten when the clients file changes; an unknown issuer or an unmapped client is no token of this kind.
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { noopTelemetry } from '../../observability/telemetry.js';
import { createFederatedTokens, FEDERATED_TOKEN_MAX_CHARS, type FederationDirectory } from './federated-tokens.js';
import type { TrustedIssuer } from './trusted-issuers.js';

const ISSUER = 'https://login.example.test/tenant';
const AUDIENCE = 'api://callerid';

async function setUp(overrides: Partial<TrustedIssuer> = {}) {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' };
  const trusted: TrustedIssuer = {
    issuer: ISSUER,
    audiences: [AUDIENCE],
    jwksUri: `${ISSUER}/keys`,
    clientClaims: ['client_id', 'azp'],
    algorithms: ['ES256'],
    index: 0,
    ...overrides,
  };
  const state = { generation: 1, identities: new Map([['app-1', 'crm']]), now: Date.now() };
  const directory: FederationDirectory = {
    trustedIssuer: (iss) => (iss === ISSUER ? trusted : undefined),
    clientOfIdentity: (_issuer, subject) => state.identities.get(subject),
    generation: () => state.generation,
  };
  const tokens = createFederatedTokens({
    directory,
    clock: () => state.now,
    fetch: (async () => Response.json({ keys: [jwk] })) as unknown as typeof fetch,
    logger: { debug() {}, info() {}, warn() {}, error() {} },
    telemetry: noopTelemetry,
    allowHttp: false,
  });
  const sign = (claims: Record<string, unknown>, header: Record<string, unknown> = { typ: 'at+jwt' }) => {
    const secs = Math.floor(state.now / 1000);
    return new SignJWT({ iss: ISSUER, aud: AUDIENCE, iat: secs, exp: secs + 300, client_id: 'app-1', ...claims })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1', ...header })
      .sign(privateKey);
  };
  return { tokens, state, sign };
}

describe('tokens of a trusted issuer', () => {
  it('maps a verified token to the client of its identity, with what a revocation names', async () => {
    const { tokens, sign, state } = await setUp();
    const claims = await tokens.inspect(await sign({ jti: 'abc' }));
    expect(claims).toMatchObject({ clientId: 'crm', issuedAt: Math.floor(state.now / 1000) * 1000 });
    expect(claims?.jti).toMatch(/^idp-[0-9a-f]{48}$/);
    // Without a jti, the token's own digest.
    const other = await tokens.inspect(await sign({}));
    expect(other?.jti).toMatch(/^idp-[0-9a-f]{48}$/);
    expect(other?.jti).not.toBe(claims?.jti);
  });

  it('takes typ at+jwt, application/at+jwt, JWT or none, and nothing else', async () => {
    const { tokens, sign } = await setUp();
    for (const typ of ['at+jwt', 'application/at+jwt', 'JWT', undefined])
      expect(await tokens.inspect(await sign({}, typ === undefined ? {} : { typ })), String(typ)).not.toBeNull();
    for (const typ of ['id+jwt', 'logout+jwt', 'dpop+jwt'])
      expect(await tokens.inspect(await sign({}, { typ })), typ).toBeNull();
  });

  it('requires iat, not more than 60 s ahead', async () => {
    const { tokens, sign, state } = await setUp();
    const secs = Math.floor(state.now / 1000);
    expect(await tokens.inspect(await sign({ iat: undefined }))).toBeNull();
    expect(await tokens.inspect(await sign({ iat: secs + 120 }))).toBeNull();
    expect(await tokens.inspect(await sign({ iat: secs + 30 }))).not.toBeNull();
  });

  it('names the client by client_id, then azp, or by the claim the issuer is configured with', async () => {
    const { tokens, sign } = await setUp();
    expect((await tokens.inspect(await sign({ client_id: undefined, azp: 'app-1' })))?.clientId).toBe('crm');
    expect(await tokens.inspect(await sign({ client_id: 'app-2' }))).toBeNull();
    const bySub = await setUp({ clientClaims: ['sub'] });
    expect((await bySub.tokens.inspect(await bySub.sign({ client_id: 'x', sub: 'app-1' })))?.clientId).toBe('crm');
  });

  it('remembers a token until exp, and forgets it when the clients file changes', async () => {
    const { tokens, sign, state } = await setUp();
    const token = await sign({ exp: Math.floor(state.now / 1000) + 100 });
    expect(tokens.peek(token, state.now)).toBeUndefined();
    await tokens.inspect(token);
    expect(tokens.peek(token, state.now)?.clientId).toBe('crm');
    expect(tokens.peek(token, Math.floor(state.now / 1000) * 1000 + 100_000)).toBeUndefined();
    await tokens.inspect(token);
    state.generation++;
    state.identities.clear();
    expect(tokens.peek(token, state.now)).toBeUndefined();
    expect(await tokens.inspect(token)).toBeNull();
  });

  it('refuses a token over the bound and one of an issuer not trusted', async () => {
    const { tokens, sign } = await setUp();
    expect(await tokens.inspect(await sign({ pad: 'p'.repeat(FEDERATED_TOKEN_MAX_CHARS) }))).toBeNull();
    expect(await tokens.inspect(await sign({ iss: 'https://elsewhere.example' }))).toBeNull();
  });
});
