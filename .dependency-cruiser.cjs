// The layer rules of src/ (docs/architecture.md, "Layers"): no cycle between files or folders, the core never
// imports a runtime adapter, and the adapters of different runtimes never import each other.
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
    from: { path: '^src/', pathNot: '^src/(runtime|simulator)/' },
    to: { path: 'node_modules/(ioredis|undici|pino|swagger-ui-dist)/' },
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
    name: 'node-composes-redis-only-at-its-root',
    severity: 'error',
    comment: 'Only the Node composition root (node/gateway.ts) builds Redis adapters; no Node adapter imports Workers.',
    from: { path: '^src/runtime/node/', pathNot: '^src/runtime/node/gateway\\.ts$' },
    to: { path: '^src/runtime/(redis|workers)/' },
  },
  {
    name: 'node-not-workers',
    severity: 'error',
    from: { path: '^src/runtime/node/' },
    to: { path: '^src/runtime/workers/' },
  },
  {
    name: 'simulator-stands-alone',
    severity: 'error',
    comment: 'The simulator is the upstream: it shares nothing with the gateway but the clock.',
    from: { path: '^src/simulator/' },
    to: { path: '^src/', pathNot: '^src/(simulator/|clock\\.ts$)' },
  },
];

module.exports = {
  forbidden,
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.d\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
