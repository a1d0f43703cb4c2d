// `npm test`: the lint, the type check, the Node suite (vitest.config.ts) and the workerd suite
// (vitest.workers.config.ts) at the same time. The Node suite's timing-bound files (the projects `alone` and
// `own-modules`: one file at a time) run at the ordinary priority from the start, and so does the workerd suite (one
// file at a time, mostly waiting on workerd, bounds of its own). The rest runs niced (`nice -n 10`): the other Node
// files, the lint and the type check take the CPUs those leave idle while they wait, and yield them when they need
// one. All steps stay in this process's session (on Linux one autogroup: the niceness orders the steps among
// themselves, not against the machine's other sessions). The timing-bound files' output is shown as it comes; each
// other step's output whole, when it ends. Exits 1 if any step failed, after all have ended; Ctrl-C or SIGTERM ends
// them all (npm and vitest pass it on to theirs).
import { spawn } from 'node:child_process';

const NICE = ['nice', '-n', '10'];
const STEPS = [
  { name: 'timed', args: ['npx', 'vitest', 'run', '--project', 'alone', '--project', 'own-modules'], live: true },
  {
    name: 'node',
    args: [...NICE, 'npx', 'vitest', 'run', '--project', 'shared', '--project', 'heavy', '--project', 'apart'],
  },
  { name: 'workerd', args: ['npx', 'vitest', 'run', '--config', 'vitest.workers.config.ts'] },
  { name: 'lint', args: [...NICE, 'npm', 'run', '--silent', 'lint'] },
  { name: 'typecheck', args: [...NICE, 'npm', 'run', '--silent', 'typecheck'] },
];
// `node test/run-all.mjs lint typecheck` runs those steps only.
const only = process.argv.slice(2);
const unknown = only.filter((name) => !STEPS.some((s) => s.name === name));
if (unknown.length > 0) {
  console.error(`run-all: no step ${unknown.join(', ')}; the steps: ${STEPS.map((s) => s.name).join(', ')}`);
  process.exit(2);
}
const steps = only.length > 0 ? STEPS.filter((s) => only.includes(s.name)) : STEPS;

const started = Date.now();
const seconds = (ms) => `${Math.round(ms / 1000)} s`;
const children = new Set();
// Whole lines of the live step only, so a finished step's block never lands inside one of its lines.
let liveTail = '';
const print = (text) => process.stdout.write(text);

function run(step) {
  const begin = Date.now();
  // Colours as on a terminal when this runs on one; the steps' own output is a pipe either way.
  const env = process.stdout.isTTY ? { ...process.env, FORCE_COLOR: '1' } : process.env;
  const [command, ...args] = step.args;
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let output = '';
  const take = (chunk) => {
    const text = chunk.toString();
    if (!step.live) return void (output += text);
    const lines = (liveTail + text).split('\n');
    liveTail = lines.pop();
    if (lines.length > 0) print(lines.map((l) => `${l}\n`).join(''));
  };
  child.stdout.on('data', take);
  child.stderr.on('data', take);
  // A command that cannot start (e.g. no `nice`): its error is the step's output; 'close' follows.
  child.once('error', (err) => take(`run-all: ${command}: ${err.message}\n`));
  return new Promise((resolve) => {
    child.once('close', (code, signal) => {
      children.delete(child);
      const ok = code === 0;
      const took = Date.now() - begin;
      if (step.live && liveTail) print(`${liveTail}\n`);
      if (step.live) liveTail = '';
      const head = `── ${step.name}: ${ok ? 'passed' : `FAILED (${signal ?? `exit ${code}`})`} in ${seconds(took)}`;
      print(
        step.live
          ? `${head}\n`
          : `\n${head} ──\n${output}${output.endsWith('\n') ? '' : '\n'}── end of ${step.name} ──\n`,
      );
      resolve({ name: step.name, ok, took });
    });
  });
}

function stopAll(signal) {
  for (const child of children) {
    try {
      child.kill('SIGTERM');
    } catch {
      // already gone
    }
  }
  process.exitCode = 128 + (signal === 'SIGINT' ? 2 : 15);
}
process.once('SIGINT', () => stopAll('SIGINT'));
process.once('SIGTERM', () => stopAll('SIGTERM'));

const results = await Promise.all(steps.map(run));
print(`\n${results.map((r) => `${r.ok ? 'ok    ' : 'FAILED'} ${r.name} (${seconds(r.took)})`).join('\n')}\n`);
print(`npm test: ${results.every((r) => r.ok) ? 'passed' : 'FAILED'} in ${seconds(Date.now() - started)}\n`);
process.exitCode ??= results.every((r) => r.ok) ? 0 : 1;
