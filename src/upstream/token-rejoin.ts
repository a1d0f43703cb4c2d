// While this process runs on a token of its own (its token store was down), one cheap question to the store now
// and then, in the background, so the deployment gets back to one token as soon as the store answers.
import type { RunInBackground } from '../shared-state/background.js';
import type { ObtainedToken } from '../shared-state/token-store.js';
import type { SharedTokenSource, SourcedToken } from './shared-token.js';

export interface TokenRejoin {
  /** This process just fell back to its own token (the store failed): the first question waits an interval. */
  fellBack(now: number): void;
  /**
   * From a search that holds the own token `own`: starts one question when none is in flight and the interval
   * has passed, never awaited by the search. `adopt` gets the deployment's token (published by another replica,
   * or `own` offered and numbered by the store) when the store answers with one that `acceptable` takes.
   */
  ask(
    now: number,
    own: ObtainedToken,
    acceptable: (token: SourcedToken) => boolean,
    adopt: (token: SourcedToken) => void,
  ): void;
}

export function createTokenRejoin(options: {
  source: SharedTokenSource;
  intervalMs: number;
  background?: RunInBackground;
}): TokenRejoin {
  const { source, intervalMs } = options;
  let asking = false;
  let nextAt = 0;
  return {
    fellBack(now) {
      nextAt = now + intervalMs;
    },
    ask(now, own, acceptable, adopt) {
      if (asking || now < nextAt) return;
      asking = true;
      nextAt = now + intervalMs;
      const question = source
        .rejoin(own, acceptable)
        .then((found) => {
          if (found !== null) adopt(found);
        })
        .finally(() => {
          asking = false;
        });
      if (options.background) options.background(question);
      else question.catch(() => {});
    },
  };
}
