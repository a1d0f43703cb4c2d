// A gateway on HTTPS that asks for client certificates, with a PKI made by openssl: clients `pbx` (known by its SPIFFE
// id), `crm` (by its fingerprint) and `ops` (an admin, by its subject), each with a certificate and a secret, and a
// certificate of no client.
import { writeFileSync } from 'node:fs';
import { sha256Hex } from '../../src/auth/client-registry.js';
import type { EnvSource } from '../../src/config/config.js';
import { CLIENTS, startStack, type Stack } from './stack.js';
import type { Issued, TestPki } from './test-pki.js';

export const PBX_SPIFFE_ID = 'spiffe://example.org/ns/voice/sa/pbx';

export interface MtlsStack {
  stack: Stack;
  base: string;
  certs: Record<'pbx' | 'crm' | 'ops' | 'stranger', Issued>;
}

/**
 * The PKI's `ca` and `server` are made here; `env` adds to (or replaces) the gateway's settings; `more` makes what
 * else the test needs of the PKI before the gateway starts.
 */
export async function startMtlsStack(pki: TestPki, env: EnvSource = {}, more?: () => void): Promise<MtlsStack> {
  pki.ca('ca');
  pki.server('server');
  const certs = {
    pbx: pki.issue('pbx', { subj: '/O=Example/CN=pbx', san: `URI:${PBX_SPIFFE_ID}` }),
    crm: pki.issue('crm', { subj: '/O=Example/CN=crm' }),
    ops: pki.issue('ops', { subj: '/O=Example, Inc./CN=ops' }),
    stranger: pki.issue('stranger', { subj: '/O=Example/CN=stranger' }),
  };
  more?.();
  const hash = async (secret: string) => [{ hash: `sha256:${await sha256Hex(secret)}` }];
  writeFileSync(
    pki.path('clients.json'),
    JSON.stringify({
      clients: [
        { id: 'pbx', secrets: await hash(CLIENTS.pbx), certificates: [{ san_uri: PBX_SPIFFE_ID }] },
        { id: 'crm', secrets: await hash(CLIENTS.crm), certificates: [{ sha256: certs.crm.sha256 }] },
        // Spaced and cased as a person writes it; the certificate's own spelling is `CN=ops,O=Example\, Inc.`.
        {
          id: 'ops',
          admin: true,
          secrets: await hash(CLIENTS.ops),
          certificates: [{ subject: 'cn = ops, o = Example\\, Inc.' }],
        },
      ],
    }),
  );
  const stack = await startStack({
    env: {
      GATEWAY_CLIENTS: '',
      GATEWAY_ADMIN_CLIENTS: '',
      GATEWAY_CLIENTS_FILE: pki.path('clients.json'),
      TLS_CERT_FILE: pki.path('server.pem'),
      TLS_KEY_FILE: pki.path('server.key'),
      TLS_CLIENT_CA_FILE: pki.path('ca.pem'),
      ...env,
    },
  });
  return { stack, base: stack.gateway.url, certs };
}
