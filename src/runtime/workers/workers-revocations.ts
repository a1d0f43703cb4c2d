// Revoked gateway tokens on Workers: each isolate checks its in-memory list (no round trip per request) and, before
// serving a request, asks the deployment's RevocationObject for what changed once its copy is older than
// `freshMs`, so an isolate refuses a token revoked anywhere within that bound plus one object round trip.
import { systemClock, type Clock } from '../../base/clock.js';
import type { Logger } from '../../observability/logger.js';
import type { TraceCarrier } from '../../observability/tracing/http-spans.js';
import { RevocationList, type RevocationBounds, type Revocations } from '../../auth/revocations.js';
import type { DurableObjectNamespace, RevocationObjectRpc } from './bindings.js';
import { callDurableObject } from './durable-object-call.js';
import { noTrace } from './request-scope.js';
import { REVOCATION_OBJECT } from './durable-objects/revocation-object.js';
import type { WorkerSettings } from './settings.js';

interface WorkerRevocationsOptions {
  namespace: DurableObjectNamespace<RevocationObjectRpc>;
  /** DURABLE_OBJECT_TIMEOUT_MS. */
  timeoutMs: number;
  clock: Clock;
  logger: Logger;
  bounds: RevocationBounds;
  /** How old the isolate's copy may be before a request waits for the object's; default 500 ms. */
  freshMs?: number;
  /** The current request's trace context (request-scope.ts), which a revocation carries; default none. */
  trace?: () => TraceCarrier;
}

interface WorkerRevocations extends Revocations {
  /**
   * Brings the isolate's copy up to date when it is older than `freshMs`; never throws. `trace`: the context of the
   * request about to be served (its caller's: the check runs before its server span).
   */
  sync(trace: TraceCarrier): Promise<void>;
}

/** The isolate's revocations when the REVOCATIONS binding is there; else undefined (revocations hold per isolate). */
export function workerRevocationsOf(
  settings: Pick<WorkerSettings, 'revocationObjects' | 'durableObjectTimeoutMs'>,
  bounds: RevocationBounds,
  logger: Logger,
  trace: () => TraceCarrier,
): WorkerRevocations | undefined {
  const namespace = settings.revocationObjects;
  if (namespace === undefined) return undefined;
  const timeoutMs = settings.durableObjectTimeoutMs;
  return createWorkerRevocations({ namespace, timeoutMs, clock: systemClock, logger, bounds, trace });
}

function createWorkerRevocations(options: WorkerRevocationsOptions): WorkerRevocations {
  const { namespace, timeoutMs, clock, logger, trace = noTrace } = options;
  const freshMs = options.freshMs ?? 500;
  // Tokens are held back until the isolate has read the object once (docs/security.md).
  const list = new RevocationList(options.bounds, false);
  const copy = { version: 0, syncedAt: Number.NEGATIVE_INFINITY, pending: undefined as Promise<void> | undefined };
  // A stub belongs to the request that made it, so each call makes its own.
  const object = () => namespace.get(namespace.idFromName(REVOCATION_OBJECT));

  // Reads what the object took after the revision this isolate holds, a page at a time.
  const readChanges = async (caller: TraceCarrier) => {
    for (;;) {
      const read = await callDurableObject('counter', timeoutMs, () => object().since(copy.version, caller));
      // The object lost its storage: everything it holds now is read from the start.
      if (read.latest < copy.version) {
        copy.version = 0;
        continue;
      }
      for (const { seq, revocation } of read.changes) {
        list.add(revocation);
        copy.version = Math.max(copy.version, seq);
      }
      if (read.changes.length === 0 || copy.version >= read.latest) return;
    }
  };
  const fetchChanges = async (caller: TraceCarrier) => {
    const asked = clock();
    try {
      await readChanges(caller);
      list.loaded = true;
      list.prune(clock());
      copy.syncedAt = asked;
    } catch (err) {
      logger.warn(
        { event: 'revocations_sync_failed', err: err instanceof Error ? err.message : String(err) },
        'revocations not read from the Durable Object; the isolate keeps its copy and asks again',
      );
    }
  };

  return {
    list,
    reach: 'deployment',
    sync(caller) {
      if (clock() - copy.syncedAt < freshMs) return Promise.resolve();
      copy.pending ??= fetchChanges(caller).finally(() => {
        copy.pending = undefined;
      });
      return copy.pending;
    },
    async revoke(revocation) {
      const { held, replaced } = list.add(revocation);
      try {
        await callDurableObject('counter', timeoutMs, () => object().revoke(held, replaced, trace()));
        return true;
      } catch {
        return false;
      }
    },
  };
}
