// The second lookup tier: behind each process's LRU, shared by the deployment (Redis) or a data centre
// (the Cache API). It holds search answers under keyed hashes of the number, never the number itself.

/** Version of the stored entry's shape; a reader skips entries of another version (two releases side by side). */
export const TIER_ENTRY_VERSION = 1;

/** A cached upstream answer as every tier stores it: absolute times, so every tier answers `Age` truthfully. */
export interface TierEntry {
  v: typeof TIER_ENTRY_VERSION;
  /** The upstream's JSON exactly as received. */
  body: string;
  contentType: string;
  /** Epoch ms the upstream answered. */
  storedAt: number;
  /** Freshness lifetime in seconds (positive or negative TTL). */
  ttlSeconds: number;
  freshUntil: number;
  /** Until then a stale answer is served at once while one background refresh runs. */
  revalidateUntil: number;
  /** Until then a stale answer replaces an upstream failure. */
  staleIfErrorUntil: number;
  /** False for "no listing" answers, which get the shorter negative TTL. */
  listed: boolean;
}

/** What another replica purged: one key, or everything (`null`; also sent when purges may have been missed). */
export type PurgeListener = (key: string | null) => void;

/** How far a purge reaches: this process only (no tier), every replica (Redis), or one data centre (Cache API). */
export type PurgeReach = 'process' | 'deployment' | 'data-centre';

export interface LookupTier {
  readonly kind: 'redis' | 'cache-api' | 'memory';
  /** How far `delete` and `clear` reach; absent: the whole deployment. */
  readonly purgeReach?: PurgeReach;
  /** The entry under `key`, or undefined; an entry of another version is undefined. Rejects with StoreUnavailableError. */
  get(key: string): Promise<TierEntry | undefined>;
  /** Stores `entry` until the later of its stale windows ends (then the store forgets it by itself). */
  set(key: string, entry: TierEntry): Promise<void>;
  /** Removes `key` and tells every other replica to drop its local copy. */
  delete(key: string): Promise<void>;
  /** Removes every entry of this deployment and tells every other replica to drop its local copies. */
  clear(): Promise<void>;
  /**
   * Takes the fill lease of `key` for `ms`: true when this caller is the one to call the upstream; false when
   * another caller holds it (then wait for its `set`, bounded, and fetch yourself after that). A tier that
   * cannot lease (the Cache API) always answers true.
   */
  lease(key: string, ms: number): Promise<boolean>;
  /** Gives the fill lease back early (after `set`, or after the upstream failed). */
  release(key: string): Promise<void>;
  /** Purges made anywhere in the deployment, including ones this replica may have missed (then `null`). */
  onPurge(listener: PurgeListener): void;
}
