// `node bench/log-signals.mjs [--seconds S] [--rate R] [--no-build]`: what each signal costs the access log. The built
// gateway (`node dist/runtime/node/main.js`) answers R searches a second (unauthenticated: each answered 401 and
// logged) from 10 concurrent callers for S seconds, then gets SIGTERM, or SIGKILL, in the middle of that traffic; the
// request ids answered are compared with the request ids its stdout holds once it has ended.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { arg, benchGatewayEnv, BENCH_UPSTREAM_CLIENTS, build, log, root } from './harness.mjs';

const SECONDS = Number(arg('--seconds', '6'));
const RATE = Number(arg('--rate', '500'));
const CALLERS = 10;

build();
const { startSimulatorServer } = await import('../dist/simulator/server.js');
const simulator = await startSimulatorServer({ clients: BENCH_UPSTREAM_CLIENTS });

async function run(signal) {
  const child = spawn(process.execPath, ['dist/runtime/node/main.js'], {
    cwd: root,
    env: { PATH: process.env.PATH, ...benchGatewayEnv(simulator.url) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const logged = new Set();
  let port;
  const started = new Promise((resolve) =>
    createInterface({ input: child.stdout }).on('line', (line) => {
      const l = JSON.parse(line);
      if (l.event === 'start') resolve((port = l.port));
      if (l.event === 'request') logged.add(l.requestId);
    }),
  );
  const exited = new Promise((resolve) => child.once('close', (code, sig) => resolve(code ?? sig)));
  await started;
  const answered = new Set();
  const until = Date.now() + SECONDS * 1000;
  let killedAt;
  const killer = setTimeout(
    () => {
      killedAt = Date.now();
      child.kill(signal);
    },
    (SECONDS * 1000) / 2,
  );
  // Each caller asks every CALLERS / RATE seconds until the gateway stops answering or the time is up.
  const caller = async (c) => {
    for (let i = 0; Date.now() < until; i++) {
      const id = `${signal}-${c}-${i}`;
      const next = Date.now() + (CALLERS * 1000) / RATE;
      try {
        const res = await fetch(`http://127.0.0.1:${port}/v2/contacts/search?what=02079460001`, {
          headers: { 'x-request-id': id },
        });
        await res.arrayBuffer();
        answered.add(id);
      } catch {
        if (killedAt !== undefined) return;
      }
      await new Promise((r) => setTimeout(r, Math.max(0, next - Date.now())));
    }
  };
  await Promise.all(Array.from({ length: CALLERS }, (_, c) => caller(c)));
  clearTimeout(killer);
  const code = await exited;
  const lost = [...answered].filter((id) => !logged.has(id));
  log(`${signal}: exit ${code} ${Date.now() - killedAt} ms after the signal`);
  return [signal, answered.size, lost.length];
}

const rows = [];
try {
  for (const signal of ['SIGTERM', 'SIGKILL']) rows.push(await run(signal));
} finally {
  await simulator.close();
}
for (const [signal, answered, lost] of rows)
  console.log(`${signal}: ${answered} requests answered, ${lost} of their log lines missing`);
