// config/clients-file.schema.json is the JSON Schema of the clients file the gateway reads: generated from the one
// schema in src/auth/clients-file.ts and kept equal to it; a document Ajv finds valid the gateway reads, and one it
// refuses the gateway refuses too.
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { CLIENTS_FILE_SCHEMA, readClientsFile } from './clients-file.js';

const shipped = JSON.parse(readFileSync('config/clients-file.schema.json', 'utf8')) as Record<string, unknown>;
const hash = `sha256:${'c'.repeat(64)}`;

describe('the clients file JSON Schema', () => {
  it('is the schema the gateway reads the file with', () => {
    expect(shipped).toEqual(z.toJSONSchema(CLIENTS_FILE_SCHEMA));
  });

  it('agrees with the gateway on good and wrong documents', () => {
    const ajv = new Ajv2020({ strict: false });
    addFormats.default(ajv);
    const validate = ajv.compile(shipped);
    for (const doc of [
      { clients: [] },
      { clients: [{ id: 'crm', secrets: [{ hash }], admin: true, token_ttl_seconds: 600 }] },
      { clients: [{ id: 'crm', secrets: [{ hash, not_after: '2026-12-01T00:00:00+01:00' }] }] },
      { clients: [{ id: 'crm', secrets: [{ hash: 'sha256:12' }] }] },
      { clients: [{ id: 'crm', secrets: [] }] },
      { clients: [{ id: 'a b', secrets: [{ hash }] }] },
      { clients: [{ id: 'crm', secrets: [{ hash }], upstream_quota_per_day: -1 }] },
      { clients: [{ id: 'crm', secrets: [{ hash }], rate: 1 }] },
      { users: [] },
      { issuers: [{ issuer: 'https://idp.example', audience: ['a', 'b'], algorithms: ['ES256'] }], clients: [] },
      { issuers: [{ issuer: 'https://idp.example', audience: 'a', algorithms: ['HS256'] }], clients: [] },
      {
        issuers: [{ issuer: 'https://idp.example', audience: 'a', jwks_uri: 'https://idp.example/keys' }],
        clients: [],
      },
      { issuers: [{ issuer: 'https://idp.example', audience: 'a', client_claim: 'sub', extra: 1 }], clients: [] },
      {
        issuers: [{ issuer: 'https://idp.example', audience: 'a' }],
        clients: [{ id: 'crm', identities: [{ issuer: 'https://idp.example', subject: 'app' }] }],
      },
      { clients: [{ id: 'crm', secrets: [{ hash }], identities: [] }] },
      {
        clients: [
          {
            id: 'pbx',
            secrets: [{ hash }],
            certificates: [
              { sha256: 'AB:'.repeat(31) + 'AB' },
              { subject: 'CN=pbx,O=Example' },
              { san_uri: 'spiffe://example.org/ns/voice/sa/pbx' },
              { san_dns: 'pbx.voice.example' },
            ],
          },
        ],
      },
      { clients: [{ id: 'pbx', secrets: [{ hash }], certificates: [{ sha256: 'ab' }] }] },
      { clients: [{ id: 'pbx', secrets: [{ hash }], certificates: [{ subject: 'pbx' }] }] },
      { clients: [{ id: 'pbx', secrets: [{ hash }], certificates: [{ san_uri: 'not a uri' }] }] },
      { clients: [{ id: 'pbx', secrets: [{ hash }], certificates: [{ san_dns: '*.example' }] }] },
      { clients: [{ id: 'pbx', secrets: [{ hash }], certificates: [{ sha256: 'ab'.repeat(32), subject: 'CN=x' }] }] },
      { clients: [{ id: 'pbx', certificates: [{ san_uri: 'spiffe://example.org/ns/voice/sa/pbx' }] }] },
      { clients: [{ id: 'pbx', certificates: [] }] },
    ]) {
      expect(readClientsFile(JSON.stringify(doc), []).ok, JSON.stringify(doc)).toBe(validate(doc));
    }
  });
});
