// A loopback port that was free a moment ago (free-port.mjs), for the tests written in TypeScript.
export { freePort } from './free-port.mjs';
