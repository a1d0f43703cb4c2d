// Types of free-port.mjs.
export function freePort(): Promise<number>;
