// "Run this after the response": background work (a stale-while-revalidate refresh, a fill that outlives
// its caller, a token refresh ahead of expiry, a counter reconciliation) that the runtime must not cancel.
// Node runs it in process; Workers hand it to the current request's `ctx.waitUntil`.

/** Keeps `work` alive past the response; its failure is the caller's to record, never thrown from here. */
export type RunInBackground = (work: Promise<unknown>) => void;

export const inProcess: RunInBackground = (work) => {
  work.catch(() => {});
};
