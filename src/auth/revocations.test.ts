import { describe, expect, it } from 'vitest';
import { createGatewayTokens } from './gateway-tokens.js';
import { RevocationList, type Revocation } from './revocations.js';
import { hs256Jwt } from '../services/hs256-jwt.js';

const T = 1_700_000_000_000;
const HOUR = 3_600_000;
const bounds = { perClient: 3, total: 5 };

const tokenOf = (clientId: string, n: number): Revocation & { kind: 'token' } => ({
  kind: 'token',
  jti: `${clientId}-${n}`,
  clientId,
  issuedAt: T + n,
  until: T + n + HOUR,
});

describe('the revocation list', () => {
  it("revokes a client's tokens issued up to and including the cut's millisecond, not the next one", () => {
    const list = new RevocationList(bounds);
    list.add({ kind: 'client', clientId: 'pbx', before: T, until: T + HOUR });
    expect(list.isRevoked({ jti: 'a', clientId: 'pbx', issuedAt: T - 1 })).toBe(true);
    expect(list.isRevoked({ jti: 'b', clientId: 'pbx', issuedAt: T })).toBe(true);
    expect(list.isRevoked({ jti: 'c', clientId: 'pbx', issuedAt: T + 1 })).toBe(false);
    expect(list.isRevoked({ jti: 'd', clientId: 'crm', issuedAt: T })).toBe(false);
  });

  it("widens a client's revocation past its bound into a cut at the token's iat, replacing what the cut covers", () => {
    const list = new RevocationList(bounds);
    for (const n of [1, 2, 3]) expect(list.add(tokenOf('crm', n)).held.kind).toBe('token');
    const widened = list.add(tokenOf('crm', 4));
    expect(widened).toEqual({
      held: { kind: 'client', clientId: 'crm', before: T + 4, until: T + 4 + HOUR },
      replaced: ['crm-1', 'crm-2', 'crm-3'],
    });
    expect(list.size).toBe(1);
    for (const n of [1, 2, 3, 4]) expect(list.isRevoked({ jti: `x${n}`, clientId: 'crm', issuedAt: T + n })).toBe(true);
    expect(list.isRevoked({ jti: 'x5', clientId: 'crm', issuedAt: T + 5 })).toBe(false);
    // A token the cut covers adds nothing.
    expect(list.add(tokenOf('crm', 2)).held.kind).toBe('client');
    expect(list.size).toBe(1);
  });

  it('widens any revocation into a cut once the list holds its total, and never holds more', () => {
    const list = new RevocationList(bounds);
    for (const n of [1, 2, 3]) list.add(tokenOf('crm', n));
    for (const n of [1, 2]) list.add(tokenOf('pbx', n));
    expect(list.size).toBe(5);
    expect(list.add(tokenOf('ops', 9)).held).toMatchObject({ kind: 'client', clientId: 'ops', before: T + 9 });
    expect(list.isRevoked({ jti: 'ops-9', clientId: 'ops', issuedAt: T + 9 })).toBe(true);
    for (let n = 10; n < 1000; n++) list.add(tokenOf(`c${n % 7}`, n));
    // Five single tokens at most, and one cut per client (ops, c0..c6 and perhaps crm, pbx).
    expect(list.size).toBeLessThanOrEqual(5 + 10);
  });

  it('forgets entries once the tokens they name have expired', () => {
    const list = new RevocationList(bounds);
    list.add(tokenOf('crm', 1));
    list.add({ kind: 'client', clientId: 'pbx', before: T, until: T + HOUR });
    list.prune(T + 2 * HOUR);
    expect(list.size).toBe(0);
  });
});

describe('gateway tokens while the revocations are not loaded', () => {
  it('accepts no token until the list has been loaded once, then as before', async () => {
    const list = new RevocationList(bounds, false);
    const gatewayTokens = await createGatewayTokens({
      jwt: hs256Jwt,
      secret: 'k'.repeat(32),
      ttlSeconds: 60,
      clock: () => T,
      revocations: list,
    });
    const { accessToken } = await gatewayTokens.issue('crm');
    expect(gatewayTokens.canCheck()).toBe(false);
    expect(await gatewayTokens.verify(accessToken)).toBeNull();
    expect(gatewayTokens.peek(accessToken)).toBeUndefined();
    list.loaded = true;
    expect(gatewayTokens.canCheck()).toBe(true);
    expect(await gatewayTokens.verify(accessToken)).toMatchObject({ clientId: 'crm' });
  });
});
