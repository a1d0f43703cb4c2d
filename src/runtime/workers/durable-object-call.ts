// One call from an isolate to a Durable Object with a deadline: whatever goes wrong on the way (no answer in time,
// an overloaded or resetting object, a network error) becomes StoreUnavailableError, so the core falls back.
import { StoreUnavailableError, type SharedStoreName } from '../../shared-state/store-unavailable.js';

export async function callDurableObject<T>(
  store: SharedStoreName,
  timeoutMs: number,
  call: () => Promise<T>,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new StoreUnavailableError(store, `durable object gave no answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  const answer = (async () => call())().catch((err: unknown) => {
    throw new StoreUnavailableError(store, 'durable object call failed', { cause: err });
  });
  try {
    return await Promise.race([answer, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
