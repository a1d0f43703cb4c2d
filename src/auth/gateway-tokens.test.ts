import { describe, expect, it } from 'vitest';
import { ClientRegistry, sha256Hex } from './client-registry.js';
import { createGatewayTokens } from './gateway-tokens.js';
import { hs256Jwt } from '../services/hs256-jwt.js';

const SECRET = 'k'.repeat(32);
const OTHER = 'o'.repeat(32);

function fakeClock(start = 1_700_000_000_000) {
  let now = start;
  return { clock: () => now, advance: (ms: number) => (now += ms) };
}

describe('gateway tokens', () => {
  it('issues a token that verifies to its client until it expires', async () => {
    const t = fakeClock();
    const gatewayTokens = await createGatewayTokens({ jwt: hs256Jwt, secret: SECRET, ttlSeconds: 60, clock: t.clock });
    const { accessToken, expiresInSeconds } = await gatewayTokens.issue('crm');
    expect(expiresInSeconds).toBe(60);
    expect(await gatewayTokens.verify(accessToken)).toMatchObject({ clientId: 'crm' });
    t.advance(59_000);
    expect(await gatewayTokens.verify(accessToken)).not.toBeNull();
    t.advance(1_000);
    expect(await gatewayTokens.verify(accessToken)).toBeNull();
  });

  it('rejects a token signed with another key, tampered with, or not a JWT', async () => {
    const t = fakeClock();
    const ours = await createGatewayTokens({ jwt: hs256Jwt, secret: SECRET, ttlSeconds: 60, clock: t.clock });
    const theirs = await createGatewayTokens({ jwt: hs256Jwt, secret: OTHER, ttlSeconds: 60, clock: t.clock });
    const foreign = (await theirs.issue('crm')).accessToken;
    expect(await ours.verify(foreign)).toBeNull();
    const token = (await ours.issue('crm')).accessToken;
    const [h, p, s] = token.split('.');
    const forgedPayload = btoa(
      JSON.stringify({ ...JSON.parse(atob(p!.replace(/-/g, '+').replace(/_/g, '/'))), sub: 'admin' }),
    ).replace(/=+$/, '');
    expect(await ours.verify(`${h}.${forgedPayload}.${s}`)).toBeNull();
    expect(await ours.verify('not-a-jwt')).toBeNull();
    expect(await ours.verify('')).toBeNull();
  });

  it('carries a key id and accepts tokens of a previous key during rotation', async () => {
    const t = fakeClock();
    const old = await createGatewayTokens({ jwt: hs256Jwt, secret: OTHER, ttlSeconds: 60, clock: t.clock });
    const oldToken = (await old.issue('crm')).accessToken;
    const rotated = await createGatewayTokens({
      jwt: hs256Jwt,
      secret: SECRET,
      previousSecrets: [OTHER],
      ttlSeconds: 60,
      clock: t.clock,
    });
    expect(await rotated.verify(oldToken)).toMatchObject({ clientId: 'crm' });
    const header = JSON.parse(
      atob((await rotated.issue('crm')).accessToken.split('.')[0]!.replace(/-/g, '+').replace(/_/g, '/')),
    );
    expect(header).toMatchObject({ alg: 'HS256' });
    expect(typeof header.kid).toBe('string');
  });
});

describe('gateway tokens: registration and spelling', () => {
  it('accepts a token only while its client is registered, in verify and in peek', async () => {
    const t = fakeClock();
    const registered = new Set(['crm']);
    const gatewayTokens = await createGatewayTokens({
      jwt: hs256Jwt,
      secret: SECRET,
      ttlSeconds: 60,
      clock: t.clock,
      isRegistered: (id) => registered.has(id),
    });
    const { accessToken } = await gatewayTokens.issue('crm');
    expect(await gatewayTokens.verify(accessToken)).toMatchObject({ clientId: 'crm' });
    expect(gatewayTokens.peek(accessToken)).toMatchObject({ clientId: 'crm' });
    registered.delete('crm');
    expect(gatewayTokens.peek(accessToken)).toBeUndefined();
    expect(await gatewayTokens.verify(accessToken)).toBeNull();
  });

  it('peeks each of several tokens as itself, a copy of one too, and stops at its expiry', async () => {
    const t = fakeClock();
    const gatewayTokens = await createGatewayTokens({ jwt: hs256Jwt, secret: SECRET, ttlSeconds: 60, clock: t.clock });
    const crm = (await gatewayTokens.issue('crm')).accessToken;
    const pbx = (await gatewayTokens.issue('pbx')).accessToken;
    const unverified = (await gatewayTokens.issue('desk')).accessToken;
    await gatewayTokens.verify(crm);
    await gatewayTokens.verify(pbx);
    for (const [token, client] of [
      [crm, 'crm'],
      [pbx, 'pbx'],
      [crm, 'crm'],
      [`${crm} `.trim(), 'crm'],
    ])
      expect(gatewayTokens.peek(token!)).toMatchObject({ clientId: client });
    // Never verified: unknown to peek, whatever was peeked before it.
    expect(gatewayTokens.peek(unverified)).toBeUndefined();
    expect(gatewayTokens.peek(crm)).toMatchObject({ clientId: 'crm' });
    t.advance(60_000);
    expect(gatewayTokens.peek(crm)).toBeUndefined();
    expect(gatewayTokens.peek(pbx)).toBeUndefined();
  });

  it('refuses padded and non-canonical base64url in any part of the token', async () => {
    const t = fakeClock();
    const gatewayTokens = await createGatewayTokens({ jwt: hs256Jwt, secret: SECRET, ttlSeconds: 60, clock: t.clock });
    const { accessToken } = await gatewayTokens.issue('crm');
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(accessToken.at(-1)!);
    for (const bits of [1, 2, 3])
      expect(await gatewayTokens.verify(accessToken.slice(0, -1) + alphabet[last ^ bits])).toBeNull();
    expect(await gatewayTokens.verify(`${accessToken}=`)).toBeNull();
    expect(await gatewayTokens.verify(accessToken.replace('.', '=.'))).toBeNull();
    expect(await gatewayTokens.verify(accessToken.replace(/\.([^.]+)\./, '.$1=.'))).toBeNull();
    expect(await gatewayTokens.verify(accessToken)).toMatchObject({ clientId: 'crm' });
  });
});

describe('client registry', () => {
  it('authenticates a registered client by the SHA-256 of its secret', async () => {
    const registry = new ClientRegistry(
      [{ id: 'crm', secrets: [{ sha256: await sha256Hex('s3cret') }], admin: false }],
      () => 0,
    );
    expect(await registry.authenticate('crm', 's3cret')).toBe(true);
    expect(await registry.authenticate('crm', 's3cret ')).toBe(false);
    expect(await registry.authenticate('pbx', 's3cret')).toBe(false);
    expect(await registry.authenticate('crm', '')).toBe(false);
  });
});
