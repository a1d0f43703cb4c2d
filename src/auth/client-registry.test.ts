// The client registry: two secrets during a rotation, `not_after` retiring one at its time, a reload replacing
// every client at once, quotas kept for the cost guard; and the clients file read into entries, a wrong one named
// by its field.
import { describe, expect, it } from 'vitest';
import { ClientRegistry, sha256Hex } from './client-registry.js';
import { readClientsFile } from './clients-file.js';

const T0 = Date.parse('2026-11-26T12:00:00Z');

function clock(start = T0) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe('client registry', () => {
  it('accepts both secrets during a rotation and retires the old one at its not_after', async () => {
    const time = clock();
    const registry = new ClientRegistry(
      [
        {
          id: 'crm',
          secrets: [
            { sha256: await sha256Hex('old-secret'), notAfter: T0 + 60_000 },
            { sha256: await sha256Hex('new-secret') },
          ],
          admin: false,
        },
      ],
      time.now,
    );
    const before = registry.generation();
    expect(await registry.authenticate('crm', 'old-secret')).toBe(true);
    expect(await registry.authenticate('crm', 'new-secret')).toBe(true);
    time.advance(60_000);
    expect(await registry.authenticate('crm', 'old-secret')).toBe(false);
    expect(await registry.authenticate('crm', 'new-secret')).toBe(true);
    // Remembered credentials are checked again once a secret retires.
    expect(registry.generation()).toBeGreaterThan(before);
  });

  it('replaces every client at a reload: added ones log in, removed ones are refused, quotas follow', async () => {
    const time = clock();
    const entry = async (id: string, quota?: number) => ({
      id,
      secrets: [{ sha256: await sha256Hex(`${id}-secret`) }],
      admin: id === 'ops',
      ...(quota === undefined ? {} : { upstreamQuotaPerDay: quota }),
    });
    const registry = new ClientRegistry([await entry('crm', 5), await entry('ops')], time.now, {
      fixed: new Map([['console', 1000]]),
      perDay: 50,
    });
    expect([...registry.quotas]).toEqual([
      ['console', 1000],
      ['crm', 5],
      ['ops', 50],
    ]);
    const generation = registry.generation();
    registry.replace([await entry('pbx')]);
    expect(registry.has('crm')).toBe(false);
    expect(await registry.authenticate('crm', 'crm-secret')).toBe(false);
    expect(await registry.authenticate('pbx', 'pbx-secret')).toBe(true);
    expect(registry.isAdmin('ops')).toBe(false);
    expect([...registry.quotas]).toEqual([
      ['console', 1000],
      ['pbx', 50],
    ]);
    expect(registry.generation()).toBeGreaterThan(generation);
  });
});

describe('clients file', () => {
  const hash = `sha256:${'a'.repeat(64)}`;
  it('reads each client with its secrets, admin flag, quota and token lifetime', () => {
    const read = readClientsFile(
      JSON.stringify({
        clients: [
          {
            id: 'crm',
            secrets: [{ hash, not_after: '2026-12-01T00:00:00Z' }, { hash: `sha256:${'b'.repeat(64)}` }],
            admin: true,
            upstream_quota_per_day: 100,
            token_ttl_seconds: 3600,
          },
        ],
      }),
      ['console'],
    );
    expect(read).toEqual({
      ok: true,
      clients: [
        {
          id: 'crm',
          secrets: [
            { sha256: 'a'.repeat(64), notAfter: Date.parse('2026-12-01T00:00:00Z') },
            { sha256: 'b'.repeat(64) },
          ],
          admin: true,
          upstreamQuotaPerDay: 100,
          tokenTtlSeconds: 3600,
        },
      ],
      issuers: [],
    });
  });

  it('names the first wrong field in one line', () => {
    const problem = (doc: unknown) => {
      const read = readClientsFile(typeof doc === 'string' ? doc : JSON.stringify(doc), ['console']);
      return read.ok ? undefined : read.problem;
    };
    expect(problem('{')).toMatch(/^is not JSON/);
    expect(problem({ clients: [{ id: 'crm', secrets: [{ hash: 'sha256:abc' }] }] })).toBe(
      'clients[0].secrets[0].hash: must be sha256:<64 lowercase hex digits> (at line 1, column 44)',
    );
    expect(problem({ clients: [{ id: 'crm', secrets: [] }] })).toBe(
      'clients[0].secrets: must list at least one secret (at line 1, column 35)',
    );
    expect(problem({ clients: [{ id: 'crm', secrets: [{ hash, not_after: 'tomorrow' }] }] })).toBe(
      'clients[0].secrets[0].not_after: must be an RFC 3339 date-time (at line 1, column 130)',
    );
    expect(problem({ clients: [{ id: 'crm', secrets: [{ hash }], rate: 5 }] })).toMatch(/^clients\[0\]/);
    expect(
      problem({
        clients: [
          { id: 'crm', secrets: [{ hash }] },
          { id: 'crm', secrets: [{ hash }] },
        ],
      }),
    ).toBe('clients[1].id: "crm" appears twice');
    expect(problem({ clients: [{ id: 'console', secrets: [{ hash }] }] })).toMatch(/^clients\[0\]\.id: "console"/);
    for (const p of [problem('{'), problem({ clients: 3 })]) expect(p!.split('\n')).toHaveLength(1);
  });
});
