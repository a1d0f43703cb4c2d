import { describe, expect, it } from 'vitest';
import { hs256Jwt } from '../../services/hs256-jwt.js';
import { verifyBearer } from '../client-authenticator.js';
import { createGatewayTokens, knownBearerClient } from '../gateway-tokens.js';
import type { PeerCertificate } from './peer-certificate.js';
import { confirmationOf } from './token-binding.js';

const cert = (sha256: string, problem?: string): PeerCertificate => ({
  sha256,
  subject: 'CN=pbx',
  sanUris: [],
  sanDns: [],
  problem,
});
const PBX = cert('ab'.repeat(32));
const source = (c: PeerCertificate | undefined) => ({ peerCertificate: () => c });
const gatewayTokens = () =>
  createGatewayTokens({ jwt: hs256Jwt, secret: 'k'.repeat(32), ttlSeconds: 60, clock: Date.now });

describe('certificate-bound gateway tokens (RFC 8705 section 3)', () => {
  it('is accepted with its verified certificate only, known or verified afresh', async () => {
    const tokens = await gatewayTokens();
    const { accessToken } = await tokens.issue('pbx', confirmationOf(PBX));
    const header = `Bearer ${accessToken}`;
    expect(await verifyBearer(tokens, header, source(PBX))).toEqual({ clientId: 'pbx' });
    expect((await tokens.verify(accessToken))?.x5tS256).toBe(Buffer.from('ab'.repeat(32), 'hex').toString('base64url'));
    for (const other of [undefined, cert('cd'.repeat(32)), cert('ab'.repeat(32), 'expired')]) {
      const refused = await verifyBearer(tokens, header, source(other));
      expect('refused' in refused && refused.refused.headers?.['www-authenticate']).toContain('invalid_token');
      expect(knownBearerClient(tokens, header, undefined, source(other))).toBeUndefined();
    }
    expect(knownBearerClient(tokens, header, undefined, source(PBX))).toBe('pbx');
  });

  it('reads no certificate for an unbound token', async () => {
    const tokens = await gatewayTokens();
    const header = `Bearer ${(await tokens.issue('crm')).accessToken}`;
    const untouchable = {
      peerCertificate: () => {
        throw new Error('read');
      },
    };
    expect(await verifyBearer(tokens, header, untouchable)).toEqual({ clientId: 'crm' });
    expect(knownBearerClient(tokens, header, undefined, untouchable)).toBe('crm');
  });
});
