// The bound on upstream calls in flight in this process (UPSTREAM_MAX_CONCURRENCY): further calls wait in a
// bounded FIFO queue until a slot frees or their lookup's deadline passes.
import type { Clock } from '../clock.js';

export type Release = () => void;

export interface Bulkhead {
  /** A slot (call the release once the call is over), or `'full'` / `'timeout'` when none could be had. */
  acquire(deadline: number): Promise<Release | 'full' | 'timeout'>;
  readonly inFlight: number;
  readonly queued: number;
}

interface Waiter {
  grant: (release: Release) => void;
}

export function createBulkhead(options: { max: number; maxQueue: number; clock: Clock }): Bulkhead {
  const { max, maxQueue, clock } = options;
  let inFlight = 0;
  const queue: Waiter[] = [];

  function release(): void {
    // The slot passes straight to the next waiter, so a newcomer cannot overtake the queue.
    const next = queue.shift();
    if (next) next.grant(once());
    else inFlight--;
  }

  function once(): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      release();
    };
  }

  return {
    acquire(deadline) {
      if (inFlight < max) {
        inFlight++;
        return Promise.resolve(once());
      }
      if (queue.length >= maxQueue) return Promise.resolve('full');
      const wait = deadline - clock();
      if (wait <= 0) return Promise.resolve('timeout');
      return new Promise((resolve) => {
        const waiter: Waiter = {
          grant: (r) => {
            clearTimeout(timer);
            resolve(r);
          },
        };
        const timer = setTimeout(() => {
          const at = queue.indexOf(waiter);
          if (at !== -1) queue.splice(at, 1);
          resolve('timeout');
        }, wait);
        queue.push(waiter);
      });
    },
    get inFlight() {
      return inFlight;
    },
    get queued() {
      return queue.length;
    },
  };
}
