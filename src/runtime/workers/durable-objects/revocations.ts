// The Durable Object behind revocations on Workers: one instance for the deployment holds every revoked gateway
// token still able to be used (until its expiry) under a version, which isolates compare with their own copy.
import { DurableObject } from 'cloudflare:workers';
import { systemClock } from '../../../clock.js';
import type { Revocation } from '../../../auth/revocations.js';
import type { DurableObjectState, RevocationObjectRpc, RevocationSnapshot } from '../bindings.js';

/** The one instance's name: revocations are few and read as one set. */
export const REVOCATION_OBJECT = 'deployment';

const KEY = 'revocations';

// A class because the Workers runtime instantiates Durable Objects from an exported class.
export class RevocationObject extends DurableObject implements RevocationObjectRpc {
  private readonly state: DurableObjectState;

  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env);
    this.state = ctx;
  }

  async revoke(revocation: Revocation): Promise<number> {
    const held = await this.snapshot();
    const now = systemClock();
    const entries = [...held.entries.filter((e) => e.until > now), revocation];
    const next: RevocationSnapshot = { version: held.version + 1, entries };
    await this.state.storage.put(KEY, next);
    return next.version;
  }

  async since(version: number): Promise<RevocationSnapshot | null> {
    const held = await this.snapshot();
    return held.version === version ? null : held;
  }

  private async snapshot(): Promise<RevocationSnapshot> {
    return (await this.state.storage.get<RevocationSnapshot>(KEY)) ?? { version: 0, entries: [] };
  }
}
