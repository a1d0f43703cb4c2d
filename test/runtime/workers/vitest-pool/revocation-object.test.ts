// The revocation Durable Object in real workerd: an isolate reads only what was written after the revision it
// holds, a client's cut replaces the token entries it covers, and expired entries are swept by later revocations.
import { reset, runInDurableObject } from 'cloudflare:test';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Revocation } from '../../../../src/auth/revocations.js';
import { REVOCATION_OBJECT } from '../../../../src/runtime/workers/durable-objects/revocation-object.js';
import { revocationObjects } from './control.js';

const object = () => revocationObjects.get(revocationObjects.idFromName(REVOCATION_OBJECT));
const HOUR = 3_600_000;
const token = (n: number, until = Date.now() + HOUR): Revocation => ({
  kind: 'token',
  jti: `jti-${n}`,
  clientId: 'crm',
  issuedAt: Date.now() - 1000 + n,
  until,
});

describe('the revocation Durable Object', () => {
  beforeEach(async () => {
    await reset();
  });

  it('answers only the entries written after the revision asked about, a page at a time', async () => {
    for (let n = 1; n <= 5; n++) expect(await object().revoke(token(n), [])).toBe(n);
    const after3 = await object().since(3);
    expect(after3.latest).toBe(5);
    expect(after3.changes.map((c) => [c.seq, (c.revocation as { jti: string }).jti])).toEqual([
      [4, 'jti-4'],
      [5, 'jti-5'],
    ]);
    expect((await object().since(5)).changes).toEqual([]);
    for (let n = 6; n <= 200; n++) await object().revoke(token(n), []);
    const first = await object().since(0);
    expect(first.changes).toHaveLength(128);
    expect((await object().since(first.changes.at(-1)!.seq)).changes).toHaveLength(200 - 128);
  });

  it("keeps one cut per client, which replaces the client's token entries it covers", async () => {
    await object().revoke(token(1), []);
    await object().revoke(token(2), []);
    const cut: Revocation = { kind: 'client', clientId: 'crm', before: Date.now(), until: Date.now() + HOUR };
    await object().revoke(cut, ['jti-1', 'jti-2']);
    await object().revoke({ ...cut, before: cut.before + 1 }, []);
    const all = await object().since(0);
    expect(all.latest).toBe(4);
    expect(all.changes.map((c) => c.revocation)).toEqual([{ ...cut, before: cut.before + 1 }]);
  });

  it('sweeps expired entries from its storage as later revocations arrive', async () => {
    await object().revoke(token(1, Date.now() + 20), []);
    await object().revoke(token(2, Date.now() + 20), []);
    await new Promise((r) => setTimeout(r, 50));
    await object().revoke(token(3), []);
    expect((await object().since(0)).changes.map((c) => c.seq)).toEqual([3]);
    const keys = await runInDurableObject(object(), async (_instance, state) => [
      ...(await state.storage.list({})).keys(),
    ]);
    expect(keys.filter((k) => k.includes('jti-1') || k.includes('jti-2'))).toEqual([]);
  });
});
