// The named builds the bench compares against (`--before <name>`), each with its commit and what it is: the one place
// the npm scripts and the bench scripts take them from. `--before` takes any git ref as well.

/** Name → the commit and what that build is. */
export const BASELINES = {
  'before-identities': {
    commit: 'afec171',
    what:
      "the last build before identity providers' tokens, client certificates and certificate-bound tokens, and the " +
      "tracing collector's contract: what those cost a hit that uses none of them",
  },
  'before-house-by-operation': {
    commit: 'b087d06',
    what:
      'the last build before one folder per operation, one builder of the request record and span for every door, ' +
      'and the bounded revocations, exporter and clients file',
  },
  'before-search-use-case': {
    commit: '3c31d37',
    what:
      'the last build before CNAM, batch and the console render one search use case and every listener applies ' +
      'one set of request rules',
  },
  'before-search-contract': {
    commit: '51ce6bd',
    what: 'the last build before the search is rewritten as one runtime-neutral contract behind two doors',
  },
  'before-hit-path-tuning': {
    commit: '646c45a',
    what:
      'the last build before the hit path was tuned: 4–16 KiB log writes, prom-client counting per request, ' +
      'every miss through Hono; the long-range reference',
  },
};

/** The baseline `npm run bench`, `npm run bench:before-after` and `npm run bench:instructions` compare against. */
export const DEFAULT_BASELINE = 'before-house-by-operation';

/** The commit a baseline name stands for (any other ref passes through). */
export const baselineRef = (name) => BASELINES[name]?.commit ?? name;
