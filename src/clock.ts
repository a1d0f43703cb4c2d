// Time as an injected dependency, so tests drive expiry without global fake timers.

/** Milliseconds since the epoch. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();
