// The layer rules of src/ (docs/architecture.md, "Layers"): no cycle, types flow down, the runtime adapters serve
// the app without knowing its routes, the domain knows no web framework, and the runtimes never import each other.

/** The runtime-neutral folders below the routes: what a search, a login or a lookup decides. */
const DOMAIN = 'lookup|guard|limits|upstream|auth|cnam|search|request';
/** The ports the domain writes to (shared state, telemetry, logs). */
const PORTS = 'shared-state|observability';
/** The layer that speaks HTTP through Hono: routes, the console, the docs, the middleware. */
const HTTP_LAYER = '^src/(routes|console|docs|middleware)/';
/** The files at the root of src/ that sit below everything: settings, errors, time, a bounded body read. */
const BASE_FILES = '^src/(config|errors|clock|bounded-body)\\.ts$';
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
      "A runtime adapter serves the app (app.ts, services.ts) without knowing its parts: no routes/, console/, docs/, middleware/, nor app-env.ts (the app's Hono variables). A type both need moves down to the domain or its ports.",
    from: { path: '^src/runtime/' },
    to: { path: [HTTP_LAYER, '^src/app-env\\.ts$'] },
  },
  {
    name: 'domain-without-hono',
    severity: 'error',
    comment: `The domain and its ports (${DOMAIN}|${PORTS}) are runtime- and framework-neutral: no hono, hono/*, @hono/*, nor app-env.ts. The app passes them what they need from Hono.`,
    from: { path: `^src/(${DOMAIN}|${PORTS})/` },
    to: { path: [...HONO, '^src/app-env\\.ts$'] },
  },
  {
    name: 'domain-below-routes',
    severity: 'error',
    comment:
      'Types flow down: the domain and its ports never import the routes, the console, the docs, the middleware or the app (app.ts, services.ts and the other files at the root of src/ but config.ts, errors.ts, clock.ts and bounded-body.ts).',
    from: { path: `^src/(${DOMAIN}|${PORTS})/` },
    to: { path: [HTTP_LAYER, '^src/[^/]+$'], pathNot: [BASE_FILES, '^src/app-env\\.ts$'] },
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
      'The one exception to "the runtimes never import each other": the Node composition root (runtime/node/gateway.ts) builds the Redis adapters when REDIS_URL is set. No other Node adapter imports runtime/redis/.',
    from: { path: '^src/runtime/node/', pathNot: '^src/runtime/node/gateway\\.ts$' },
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
