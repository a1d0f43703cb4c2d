// The W3C's own trace-context test suite (github.com/w3c/trace-context, test/ at 5ddf6db, the suite of the Level 1
// Recommendation; vendored unchanged under test/fixtures/w3c-trace-context with its licence) through the search route. The suite POSTs to a
// test service with `traceparent`/`tracestate` and waits for that service to call its URLs back with the trace
// context it would send on. Here the service is the gateway: each call back is one search (a miss) with the suite's
// trace headers, through Node's search door and through the app, and what goes back to the suite is what the gateway
// sent its upstream (the simulator records it), so the headers the suite checks are the gateway's own.
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EnvSource } from '../../src/config/config.js';
import { freePort } from '../helpers/free-port.js';
import { checkRequirement, commandRequirement } from '../helpers/requires.js';
import { startStack, type Stack } from '../helpers/stack.js';

const SUITE_DIR = fileURLToPath(new URL('../fixtures/w3c-trace-context/', import.meta.url));
/** Debian's Python, where its python3-aiohttp (the suite's one dependency) installs. */
const PYTHON = '/usr/bin/python3';
const present = checkRequirement(
  commandRequirement(PYTHON, ['-c', 'import aiohttp'], '/usr/bin/python3 with aiohttp (Debian: python3-aiohttp)'),
);

/** One of the suite's instructions: call `url` back with `arguments` as the body. */
interface Action {
  readonly url: string;
  readonly arguments?: unknown;
}

/** The suite's trace headers as they came (every line, in order), for the gateway. */
function traceHeaders(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2)
    if (/^trace/i.test(req.rawHeaders[i]!)) headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  return headers;
}

/** The test service: each action a miss at the gateway, then the suite called back with what reached the upstream. */
function testService(stack: Stack, token: string): Server {
  let searches = 0;
  const actOn = async (action: Action, headers: Headers) => {
    const before = stack.simulator.controls.stats();
    headers.set('authorization', `Bearer ${token}`);
    const number = `+44207946${String(1000 + searches++)}`;
    const res = await fetch(`${stack.gateway.url}/v2/contacts/search?what=${encodeURIComponent(number)}`, { headers });
    if (res.status !== 200) throw new Error(`search answered ${res.status}`);
    await res.arrayBuffer();
    const after = stack.simulator.controls.stats();
    const sent = new Headers({ 'content-type': 'application/json' });
    for (const value of after.traceparentsSeen.slice(before.traceparentsSeen.length)) sent.append('traceparent', value);
    for (const value of after.tracestatesSeen.slice(before.tracestatesSeen.length)) sent.append('tracestate', value);
    const back = await fetch(action.url, {
      method: 'POST',
      headers: sent,
      body: JSON.stringify(action.arguments ?? []),
    });
    await back.arrayBuffer();
  };
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const actions = JSON.parse(Buffer.concat(chunks).toString('utf8') || '[]') as Action[];
      void (async () => {
        for (const action of actions) await actOn(action, traceHeaders(req));
      })().then(
        () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'),
        (error: unknown) => res.writeHead(500).end(String(error)),
      );
    });
  });
}

/** Runs the suite against `endpoint`; resolves with each of its tests' outcome (ok, FAIL, ERROR) by name. */
async function runSuite(endpoint: string): Promise<{ outcomes: Map<string, string>; report: string }> {
  const env = {
    ...process.env,
    HARNESS_HOST: '127.0.0.1',
    HARNESS_PORT: String(await freePort()),
    SPEC_LEVEL: '1',
    STRICT_LEVEL: '2',
  };
  const child = spawn(PYTHON, ['test.py', endpoint], { cwd: SUITE_DIR, env });
  let report = '';
  child.stdout.on('data', (chunk: Buffer) => (report += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (report += chunk.toString()));
  await new Promise((resolve) => child.once('close', resolve));
  // unittest's verbose lines: `test_name (module.Class.test_name)`, its docstring's first line, `... ok`.
  const outcomes = new Map(
    [...report.matchAll(/^(test_\w+) \(.*\n.*\.\.\. (ok|FAIL|ERROR)$/gm)].map((m) => [m[1]!, m[2]!]),
  );
  return { outcomes, report };
}

/**
 * With tracing off the gateway takes no part in a trace: a valid `traceparent` and its `tracestate` go on as they
 * came, an invalid one goes on not at all. The suite expects a participant (a new parent id, a new trace where the
 * caller's is invalid), so of its tests those pass where the caller's own valid context is all it checks.
 */
const PASSED_AS_THEY_CAME = [
  'test_traceparent_header_name_valid_casing',
  'test_traceparent_ows_handling',
  'test_tracestate_all_allowed_characters',
  'test_tracestate_empty_header',
  'test_tracestate_header_name',
  'test_tracestate_header_name_valid_casing',
  'test_tracestate_included_traceparent_included',
  'test_tracestate_multiple_headers_different_keys',
  'test_tracestate_ows_handling',
];

const MODES: { tracing: string; env: EnvSource; passing: readonly string[] | 'all' }[] = [
  {
    tracing: 'on, every trace recorded',
    env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:9/v1/traces', OTEL_EXPORTER_OTLP_TIMEOUT: '100' },
    passing: 'all',
  },
  {
    tracing: 'off (OTEL_SDK_DISABLED=true)',
    env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:9/v1/traces', OTEL_SDK_DISABLED: 'true' },
    passing: PASSED_AS_THEY_CAME,
  },
];

const RUNS = MODES.flatMap((mode) => [
  { ...mode, door: "Node's search door", searchDoor: true },
  { ...mode, door: 'the app', searchDoor: false },
]);

describe.skipIf(!present).each(RUNS)(
  'the W3C suite, tracing $tracing, through $door',
  ({ env, passing, searchDoor }) => {
    let stack: Stack;
    let service: Server;
    let endpoint: string;
    beforeAll(async () => {
      stack = await startStack({ env, gateway: { searchDoor } });
      service = testService(stack, await stack.login('crm'));
      await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
      endpoint = `http://127.0.0.1:${(service.address() as { port: number }).port}/test`;
    });
    afterAll(async () => {
      service.closeAllConnections();
      await new Promise((resolve) => service.close(resolve));
      await stack.close();
    });

    it(
      passing === 'all' ? 'passes, all 40' : "passes where the caller's context goes on as it came",
      async () => {
        const { outcomes, report } = await runSuite(endpoint);
        expect(outcomes.size, report).toBe(40);
        const passed = [...outcomes].filter(([, outcome]) => outcome === 'ok').map(([name]) => name);
        expect(passed.sort(), report).toEqual(passing === 'all' ? [...outcomes.keys()].sort() : passing);
      },
      120_000,
    );
  },
);
