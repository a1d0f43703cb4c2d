// Time as an injected dependency, so tests drive expiry without global fake timers.

/** Milliseconds since the epoch. */
export type Clock = () => number;

// Date.now itself: it needs no `this`, and a wrapper would be one more call on every request.
export const systemClock: Clock = Date.now;
