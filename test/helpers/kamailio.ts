// A real Kamailio (config/kamailio/cnam-lookup.cfg) between two sipp processes: the proxy asks the gateway for the
// caller's name on each INVITE and puts it into the From display name; sipp's callee records what it received.
// Needs the Debian packages kamailio, kamailio-utils-modules (http_client) and sip-tester (sipp).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { freePort } from './free-port.js';
import { checkRequirement, commandRequirement } from './requires.js';

const CONFIG = join(import.meta.dirname, '../../config/kamailio/cnam-lookup.cfg');
const CALLER_SCENARIO = join(import.meta.dirname, '../fixtures/sipp/uac-caller.xml');

/** sipp and a Kamailio that loads the configuration (skipped with their names when missing; CI=true: fails). */
export const kamailioReady = (): boolean =>
  checkRequirement(commandRequirement('sh', ['-c', 'command -v sipp'], 'sipp (Debian package sip-tester)')) &&
  checkRequirement(
    commandRequirement(
      'kamailio',
      ['-c', '-f', CONFIG],
      'kamailio with the http_client and uac modules (Debian packages kamailio, kamailio-utils-modules)',
    ),
  );

interface Exited {
  code: number | null;
  output: string;
}

function run(command: string, args: string[], timeoutMs: number): Promise<Exited> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

export interface RunningKamailio {
  /** What Kamailio wrote to stderr so far (its xlog lines included). */
  log(): string;
  /** One call from `caller` through Kamailio to a sipp callee; the INVITE as the callee received it. */
  callFrom(caller: string): Promise<string>;
  stop(): Promise<void>;
}

/** Kamailio on a free UDP port with the configuration's defines (`CNAM_URL` and the others it reads) given by -A. */
export async function startKamailio(defines: Record<string, string>): Promise<RunningKamailio> {
  const dir = mkdtempSync(join(tmpdir(), 'callerid-kamailio-'));
  const port = await freePort();
  const args = ['-f', CONFIG, '-DD', '-E', '-m', '32', '-M', '4', '-Y', dir, '-P', join(dir, 'kamailio.pid')];
  args.push('-l', `udp:127.0.0.1:${port}`);
  for (const [name, value] of Object.entries(defines)) args.push('-A', `${name}="${value}"`);
  const kamailio = spawn('kamailio', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  kamailio.stderr.on('data', (d) => (log += d));
  await listening(kamailio, () => log);
  return {
    log: () => log,
    callFrom: (caller) => callThrough(port, caller, dir, () => log),
    stop: () => stop(kamailio),
  };
}

/** Listening once its children report in (or it has exited with the reason in its log). */
async function listening(kamailio: ChildProcess, log: () => string): Promise<void> {
  const started = Date.now();
  while (
    !/INFO: .*main\.c.*|bind_sock|listening on/i.test(log()) &&
    kamailio.exitCode === null &&
    Date.now() - started < 5000
  ) {
    await new Promise((r) => setTimeout(r, 100));
  }
  await new Promise((r) => setTimeout(r, 300));
  if (kamailio.exitCode !== null) throw new Error(`kamailio exited: ${log()}`);
}

async function stop(kamailio: ChildProcess): Promise<void> {
  if (kamailio.exitCode !== null) return;
  const exited = new Promise((r) => kamailio.once('exit', r));
  kamailio.kill('SIGTERM');
  await exited;
}

async function callThrough(kamailioPort: number, caller: string, dir: string, log: () => string): Promise<string> {
  const calleePort = await freePort();
  const messages = join(dir, `callee-${calleePort}.log`);
  // The callee ends after its one call (-m 1).
  const callee = run(
    'sipp',
    ['-sn', 'uas', '-i', '127.0.0.1', '-p', String(calleePort), '-m', '1'].concat([
      '-trace_msg',
      '-message_file',
      messages,
      '-nostdin',
    ]),
    15_000,
  );
  await new Promise((r) => setTimeout(r, 200));
  const call = await run(
    'sipp',
    ['127.0.0.1:' + calleePort, '-sf', CALLER_SCENARIO, '-key', 'caller', caller].concat(
      ['-rsa', `127.0.0.1:${kamailioPort}`, '-i', '127.0.0.1', '-p', String(await freePort())],
      // Kamailio's UDP workers may forward the callee's 180 after its 200: a provisional answer after the final one
      // is ignored, as a UAC ignores a provisional answer to a call already answered, not taken as a failed call.
      ['-m', '1', '-timeout', '10s', '-nostdin', '-default_behaviors', 'all,-abortunexp'],
    ),
    15_000,
  );
  expect(call.code, `${call.output}\n--- kamailio ---\n${log()}`).toBe(0);
  const answered = await callee;
  expect(answered.code, answered.output).toBe(0);
  const received = readFileSync(messages, 'utf8');
  const invite = received.split(/-{10,}/).find((m) => /^\s*INVITE sip:/m.test(m));
  expect(invite, received).toBeDefined();
  return invite!;
}
