// The Durable Object behind revocations on Workers: one instance for the deployment holds every revoked gateway
// token still able to be used (until its expiry), each entry under the revision that wrote it, so an isolate reads
// only what was written after the revision it holds. Each revocation sweeps a bounded number of expired entries.
import { DurableObject } from 'cloudflare:workers';
import { systemClock } from '../../../base/clock.js';
import type { Revocation } from '../../../auth/revocations.js';
import type { DurableObjectState, RevocationChanges, RevocationObjectRpc } from '../bindings.js';

/** The one instance's name: revocations are read as one set. */
export const REVOCATION_OBJECT = 'deployment';

/** Entries per `since` answer; expired entries swept per revocation. */
const PAGE = 128;
const SWEEP = 100;

const pad = (n: number): string => String(Math.max(0, Math.floor(n))).padStart(16, '0');
/** An entry's name: a token's by its `jti`, a client's cut by the client (one cut per client). */
const memberOf = (r: Revocation): string => (r.kind === 'token' ? `t:${r.jti}` : `c:${r.clientId}`);

// Storage: `seq` (the latest revision), `o:<revision>` → the entry, `m:<member>` → where its entry and expiry mark
// are, `x:<expiry>:<member>` → the member, in expiry order for the sweep.
type Where = { seq: number; expiry: string };

// A class because the Workers runtime instantiates Durable Objects from an exported class.
export class RevocationObject extends DurableObject implements RevocationObjectRpc {
  private readonly state: DurableObjectState;

  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env);
    this.state = ctx;
  }

  async revoke(revocation: Revocation, replaced: string[] = []): Promise<number> {
    const { storage } = this.state;
    const expired = await storage.list<string>({ prefix: 'x:', end: `x:${pad(systemClock())}`, limit: SWEEP });
    const member = memberOf(revocation);
    for (const gone of [...expired.values(), ...replaced.map((jti) => `t:${jti}`), member]) await this.forget(gone);
    const seq = ((await storage.get<number>('seq')) ?? 0) + 1;
    const expiry = `x:${pad(revocation.until)}:${member}`;
    await storage.put(`o:${pad(seq)}`, { seq, revocation });
    await storage.put(expiry, member);
    await storage.put(`m:${member}`, { seq, expiry } satisfies Where);
    await storage.put('seq', seq);
    return seq;
  }

  async since(version: number): Promise<RevocationChanges> {
    const { storage } = this.state;
    const latest = (await storage.get<number>('seq')) ?? 0;
    const found = await storage.list<RevocationChanges['changes'][number]>({
      prefix: 'o:',
      start: `o:${pad(version + 1)}`,
      limit: PAGE,
    });
    return { latest, changes: [...found.values()] };
  }

  private async forget(member: string): Promise<void> {
    const { storage } = this.state;
    const where = await storage.get<Where>(`m:${member}`);
    if (where === undefined) return;
    await storage.delete(`o:${pad(where.seq)}`);
    await storage.delete(where.expiry);
    await storage.delete(`m:${member}`);
  }
}
