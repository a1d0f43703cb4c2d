// The bound on upstream calls in flight in this process (UPSTREAM_MAX_CONCURRENCY), shared fairly between callers:
// further calls wait in a bounded queue (UPSTREAM_MAX_QUEUE) until a slot frees or their lookup's deadline passes.
// A freed slot goes to the waiting caller with the fewest calls in flight (of equals, the one served longest
// ago), each caller's own waiters in order; and while the queue is full, a caller with fewer waiters than its
// share (the queue divided by the callers present) takes the place of the newest waiter of the caller with the
// most. So one caller flooding batches cannot keep another's single search from the upstream.
import type { Clock } from '../base/clock.js';

export type Release = () => void;

export interface Bulkhead {
  /** A slot for `caller` (call the release once the call is over), or `'full'` / `'timeout'` when none could be had. */
  acquire(caller: string, deadline: number): Promise<Release | 'full' | 'timeout'>;
  readonly inFlight: number;
  readonly queued: number;
}

interface Waiter {
  grant: (release: Release) => void;
  refuse: () => void;
}

interface Caller {
  inFlight: number;
  waiting: Waiter[];
  /** When it was last given a slot (a sequence number; -1: not yet). */
  lastGrant: number;
}

export function createBulkhead(options: { max: number; maxQueue: number; clock: Clock }): Bulkhead {
  const { max, maxQueue, clock } = options;
  let inFlight = 0;
  let queued = 0;
  let grants = 0;
  // Callers with a call in flight or waiting, in the order they arrived (Map keeps insertion order).
  const callers = new Map<string, Caller>();

  const callerOf = (id: string): Caller => {
    let c = callers.get(id);
    if (c === undefined) {
      c = { inFlight: 0, waiting: [], lastGrant: -1 };
      callers.set(id, c);
    }
    return c;
  };
  const forgetIfIdle = (id: string, c: Caller) => {
    if (c.inFlight === 0 && c.waiting.length === 0) callers.delete(id);
  };

  function release(id: string, c: Caller): void {
    c.inFlight--;
    inFlight--;
    forgetIfIdle(id, c);
    // The slot passes straight to a waiter, so a newcomer cannot overtake the queue.
    const next = nextCaller(callers);
    if (next === undefined) return;
    const [nextId, nextCallerState] = next;
    const waiter = nextCallerState.waiting.shift()!;
    queued--;
    waiter.grant(take(nextId, nextCallerState));
  }

  function take(id: string, c: Caller): Release {
    c.lastGrant = grants++;
    c.inFlight++;
    inFlight++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      release(id, c);
    };
  }

  /** Makes room in a full queue for a caller under its share: the newest waiter of the caller with the most goes. */
  function makeRoomFor(c: Caller): boolean {
    const share = Math.max(1, Math.floor(maxQueue / callers.size));
    if (c.waiting.length >= share) return false;
    let most: [string, Caller] | undefined;
    for (const entry of callers) {
      if (most === undefined || entry[1].waiting.length > most[1].waiting.length) most = entry;
    }
    if (most === undefined || most[1].waiting.length <= share) return false;
    most[1].waiting.pop()!.refuse();
    queued--;
    return true;
  }

  return {
    acquire(id, deadline) {
      const c = callerOf(id);
      if (inFlight < max && queued === 0) return Promise.resolve(take(id, c));
      if (queued >= maxQueue && !makeRoomFor(c)) {
        forgetIfIdle(id, c);
        return Promise.resolve('full');
      }
      const wait = deadline - clock();
      if (wait <= 0) {
        forgetIfIdle(id, c);
        return Promise.resolve('timeout');
      }
      return new Promise((resolve) => {
        const settle = (outcome: Release | 'full' | 'timeout') => {
          clearTimeout(timer);
          resolve(outcome);
        };
        const waiter: Waiter = { grant: settle, refuse: () => settle('full') };
        const timer = setTimeout(() => {
          const at = c.waiting.indexOf(waiter);
          if (at !== -1) {
            c.waiting.splice(at, 1);
            queued--;
            forgetIfIdle(id, c);
          }
          resolve('timeout');
        }, wait);
        c.waiting.push(waiter);
        queued++;
      });
    },
    get inFlight() {
      return inFlight;
    },
    get queued() {
      return queued;
    },
  };
}

/** The waiting caller with the fewest calls in flight; of equals, the one served longest ago. */
function nextCaller(callers: Map<string, Caller>): [string, Caller] | undefined {
  let best: [string, Caller] | undefined;
  for (const entry of callers) {
    const c = entry[1];
    if (c.waiting.length === 0) continue;
    if (
      best === undefined ||
      c.inFlight < best[1].inFlight ||
      (c.inFlight === best[1].inFlight && c.lastGrant < best[1].lastGrant)
    )
      best = entry;
  }
  return best;
}
