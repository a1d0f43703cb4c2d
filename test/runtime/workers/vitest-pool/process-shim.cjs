// `require('process')` from CommonJS packages (prom-client) inside the workerd tests: the pool's module fallback
// does not list node:process as a workerd built-in, so it gets nodejs_compat's global `process` from here.
module.exports = globalThis.process;
