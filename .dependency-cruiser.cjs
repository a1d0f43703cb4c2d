// The layer rules of src/ (docs/architecture.md, "Layers"): no cycle, types flow down, the runtime adapters serve
// the app without knowing its operations, the domain knows no web framework (not even through another file), and the
// runtimes never import each other.

/** The runtime-neutral folders below the operations: what a search, a login or a lookup decides. */
const DOMAIN = 'lookup|guard|limits|upstream|auth|search|request';
/** The ports the domain writes to (shared state, telemetry, logs). */
const PORTS = 'shared-state|observability';
/** What sits below everything: the settings (config/) and the base types (base/: errors, time, a bounded body read). */
const BASE = 'base|config';
/** The layer that speaks HTTP through Hono: the operations, what their routes share (http/), the docs, the middleware. */
const HTTP_LAYER = '^src/(operations|http|docs|middleware)/';
/** The composition: the Hono app (app/) and the services it is given (services/). */
const COMPOSITION = '^src/(app|services)/';
/**
 * The search's JSON renderer, which Node's listener calls beside the app (runtime/node/search-door.ts): the one file
 * of an operation a runtime adapter imports, held to the domain's rule (no Hono, however far it reaches).
 */
const SEARCH_RENDERER = '^src/operations/search/search-json\\.ts$';
/** Hono itself, resolved (node_modules/hono/...) or not (a fixture without node_modules). */
const HONO = ['(^|/)node_modules/(hono|@hono/[^/]+)/', '^(hono|@hono/[^/]+)(/|$)'];

/** @type {import('dependency-cruiser').IForbiddenRuleType[]} */
const forbidden = [
  {
    name: 'no-file-cycle',
    severity: 'error',
    comment: 'A cycle between files: move the shared type or function down to the lower of the two.',
    from: {},
    to: { circular: true },
  },
  {
    name: 'no-folder-cycle',
    severity: 'error',
    comment: 'A cycle between folders: the lower folder must not know the higher one (types flow down).',
    scope: 'folder',
    from: {},
    to: { circular: true },
  },
  {
    name: 'core-not-runtime',
    severity: 'error',
    comment: 'The core is runtime-neutral: only src/runtime/ knows about Node, Redis and Workers.',
    from: { path: '^src/', pathNot: '^src/(runtime|simulator)/' },
    to: { path: '^src/(runtime|simulator)/' },
  },
  {
    name: 'core-web-apis-only',
    severity: 'error',
    comment: 'The core uses Web APIs: Node built-ins, ioredis and undici belong to src/runtime/.',
    from: { path: '^src/', pathNot: '^src/(runtime|simulator)/' },
    to: { dependencyTypes: ['core'] },
  },
  {
    name: 'core-no-runtime-packages',
    severity: 'error',
    comment: 'ioredis, undici, pino and swagger-ui-dist are what a runtime provides: only src/runtime/ imports them.',
    from: { path: '^src/', pathNot: '^src/(runtime|simulator)/' },
    to: { path: '(^|/)node_modules/(ioredis|undici|pino|swagger-ui-dist)/' },
  },
  {
    name: 'runtime-below-the-app',
    severity: 'error',
    comment:
      "A runtime adapter serves the app (app/, services/) without knowing its parts: no operations/, http/ (the app's Hono variables), docs/ nor middleware/, but the search's JSON renderer Node's listener calls. A type both need moves down to the domain or its ports.",
    from: { path: '^src/runtime/' },
    to: { path: HTTP_LAYER, pathNot: SEARCH_RENDERER },
  },
  {
    name: 'domain-without-hono',
    severity: 'error',
    comment: `The domain, its ports and the base (${DOMAIN}|${PORTS}|${BASE}), and the search renderer Node's listener calls, are runtime- and framework-neutral: no hono, hono/*, @hono/*, directly or through any other file. The app passes them what they need from Hono.`,
    from: { path: [`^src/(${DOMAIN}|${PORTS}|${BASE})/`, SEARCH_RENDERER] },
    to: { path: HONO, reachable: true },
  },
  {
    name: 'domain-below-routes',
    severity: 'error',
    comment:
      'Types flow down: the domain, its ports and the base never import the operations, http/, the docs, the middleware, the composition (app/, services/) or a file at the root of src/.',
    from: { path: `^src/(${DOMAIN}|${PORTS}|${BASE})/` },
    to: { path: [HTTP_LAYER, COMPOSITION, '^src/[^/]+$'] },
  },
  {
    name: 'base-at-the-bottom',
    severity: 'error',
    comment: 'The base and the settings (base/, config/) sit below the domain and its ports: they import none of them.',
    from: { path: `^src/(${BASE})/` },
    to: { path: `^src/(${DOMAIN}|${PORTS})/` },
  },
  {
    name: 'ports-below-domain',
    severity: 'error',
    comment: 'The ports (shared-state/, observability/) sit below the domain that uses them: they import none of it.',
    from: { path: `^src/(${PORTS})/` },
    to: { path: `^src/(${DOMAIN})/` },
  },
  {
    name: 'redis-alone',
    severity: 'error',
    comment: "The Redis adapters know nothing of Node's server or of Workers.",
    from: { path: '^src/runtime/redis/' },
    to: { path: '^src/runtime/(node|workers)/' },
  },
  {
    name: 'workers-alone',
    severity: 'error',
    comment: 'The Workers adapters know nothing of Node or Redis.',
    from: { path: '^src/runtime/workers/' },
    to: { path: '^src/runtime/(node|redis)/' },
  },
  {
    name: 'node-not-workers',
    severity: 'error',
    comment: 'The Node adapters know nothing of Workers.',
    from: { path: '^src/runtime/node/' },
    to: { path: '^src/runtime/workers/' },
  },
  {
    name: 'node-composes-redis-only-at-its-root',
    severity: 'error',
    comment:
      'The one exception to "the runtimes never import each other": the Node composition root (runtime/node/gateway.ts, its Redis part in runtime/node/node-redis-parts.ts) builds the Redis adapters when REDIS_URL is set. No other Node adapter imports runtime/redis/.',
    from: { path: '^src/runtime/node/', pathNot: '^src/runtime/node/(gateway|node-redis-parts)\\.ts$' },
    to: { path: '^src/runtime/redis/' },
  },
  {
    name: 'simulator-stands-alone',
    severity: 'error',
    comment: 'The simulator is the upstream: it shares nothing with the gateway but the clock.',
    from: { path: '^src/simulator/' },
    to: { path: '^src/', pathNot: '^src/(simulator/|base/clock\\.ts$)' },
  },
];

module.exports = {
  forbidden,
  options: {
    doNotFollow: { path: 'node_modules' },
    // The unit tests beside the code (`*.test.ts`) are left out (they import test helpers and Node's built-ins), and of
    // the rest only the ambient declarations of src/: the packages' own .d.ts files are what a type-first
    // `exports` map resolves to, and leaving them out would hide the imports of hono, ioredis or pino.
    exclude: { path: ['^src/.*\\.d\\.ts$', '^src/.*\\.test\\.tsx?$'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
