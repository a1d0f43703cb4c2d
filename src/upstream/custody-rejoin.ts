// Back to the deployment's token: when a replica on a token of its own asks the store again, and what it keeps.
import { hold, type Custody, type HeldToken } from './token-custody.js';
import type { TokenRejoin } from './token-rejoin.js';

/**
 * On its own token while the store may answer again: the deployment's token, when the store has one, replaces
 * the own one here; when it has none the own one is offered, so the other replicas take it at their own
 * question. Either way one token again, with no login.
 */
function askToRejoin(custody: Custody, source: TokenRejoin, held: HeldToken, now: number): void {
  const own = { token: held.token, expiresAt: held.expiresAt, obtainedAt: held.expiresAt - held.lifetimeMs };
  source.ask(
    now,
    own,
    (token) => custody.clock() < hold(custody, token).usableUntil,
    (found) => {
      // A refresh or a 401 meanwhile decided for itself.
      if (custody.state.current !== held || custody.state.refresh !== null) return;
      custody.state.current = hold(custody, found);
      const how = found.token === held.token ? 'offered' : 'adopted';
      custody.logger.info(
        {
          event: 'upstream_token_rejoined',
          how,
          generation: found.generation,
          expiresAt: new Date(found.expiresAt).toISOString(),
        },
        how === 'offered'
          ? "token store answers again; published this replica's token for the deployment"
          : "token store answers again; using the deployment's token",
      );
    },
  );
}

/** A replica on its own token asks the store (in the background, at most every few seconds) whether it may rejoin. */
export function maybeRejoin(custody: Custody, held: HeldToken, now: number): void {
  if (custody.rejoin !== null && held.generation === null && custody.state.refresh === null) {
    askToRejoin(custody, custody.rejoin, held, now);
  }
}
