// A real Kamailio (config/kamailio/cnam-lookup.cfg) asks the gateway's CNAM route with HTTP Basic credentials in
// the URL (http_client_query) and puts the name into the From display name of an INVITE that sipp sends through
// it; a second sipp, the callee, records what it received. Needs the Debian packages kamailio,
// kamailio-utils-modules (http_client) and sip-tester (sipp).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { checkRequirement, commandRequirement } from '../helpers/requires.js';
import { CLIENTS, startStack, type Stack } from '../helpers/stack.js';

const CONFIG = join(import.meta.dirname, '../../config/kamailio/cnam-lookup.cfg');
const CALLER_SCENARIO = join(import.meta.dirname, '../fixtures/sipp/uac-caller.xml');

const ready =
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

describe.skipIf(!ready)('Kamailio sets the caller name from the gateway', () => {
  let stack: Stack;
  let kamailio: ChildProcess;
  let kamailioLog = '';
  let kamailioPort: number;
  const dir = mkdtempSync(join(tmpdir(), 'callerid-kamailio-'));

  beforeAll(async () => {
    stack = await startStack();
    kamailioPort = await freePort();
    const url = new URL('/v2/contacts/cnam', stack.gateway.url);
    url.username = 'pbx';
    url.password = CLIENTS.pbx;
    kamailio = spawn(
      'kamailio',
      [
        '-f',
        CONFIG,
        '-DD',
        '-E',
        '-m',
        '32',
        '-M',
        '4',
        '-Y',
        dir,
        '-P',
        join(dir, 'kamailio.pid'),
        '-l',
        `udp:127.0.0.1:${kamailioPort}`,
        '-A',
        `CNAM_URL="${url.href}"`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    kamailio.stderr!.on('data', (d) => (kamailioLog += d));
    // Listening once its children report in (or it has exited with the reason in its log).
    const started = Date.now();
    while (
      !/INFO: .*main\.c.*|bind_sock|listening on/i.test(kamailioLog) &&
      kamailio.exitCode === null &&
      Date.now() - started < 5000
    ) {
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 300));
    if (kamailio.exitCode !== null) throw new Error(`kamailio exited: ${kamailioLog}`);
  });

  afterAll(async () => {
    if (kamailio && kamailio.exitCode === null) {
      const exited = new Promise((r) => kamailio.once('exit', r));
      kamailio.kill('SIGTERM');
      await exited;
    }
    await stack?.close();
  });

  /** One call from `caller` through Kamailio to a sipp callee; the INVITE as the callee received it. */
  async function callFrom(caller: string): Promise<string> {
    const calleePort = await freePort();
    const messages = join(dir, `callee-${calleePort}.log`);
    // The callee ends after its one call (-m 1).
    const callee = run(
      'sipp',
      [
        '-sn',
        'uas',
        '-i',
        '127.0.0.1',
        '-p',
        String(calleePort),
        '-m',
        '1',
        '-trace_msg',
        '-message_file',
        messages,
        '-nostdin',
      ],
      15_000,
    );
    await new Promise((r) => setTimeout(r, 200));
    const call = await run(
      'sipp',
      [
        '127.0.0.1:' + calleePort,
        '-sf',
        CALLER_SCENARIO,
        '-key',
        'caller',
        caller,
        '-rsa',
        `127.0.0.1:${kamailioPort}`,
        '-i',
        '127.0.0.1',
        '-p',
        String(await freePort()),
        '-m',
        '1',
        '-timeout',
        '10s',
        '-nostdin',
      ],
      15_000,
    );
    expect(call.code, `${call.output}\n--- kamailio ---\n${kamailioLog}`).toBe(0);
    const answered = await callee;
    expect(answered.code, answered.output).toBe(0);
    const received = readFileSync(messages, 'utf8');
    const invite = received.split(/-{10,}/).find((m) => /^\s*INVITE sip:/m.test(m));
    expect(invite, received).toBeDefined();
    return invite!;
  }

  it('puts the folded caller name into the From display name of the INVITE the callee receives', async () => {
    const invite = await callFrom('+442079460002');
    expect(invite).toMatch(/^From: "Muller Jonas" <sip:\+442079460002@127\.0\.0\.1:\d+>;tag=/m);
    expect(stack.simulator.controls.stats().searchByNumber).toEqual({ '+442079460002': 1 });
  });

  it('leaves the From header alone for an unlisted caller (the fallback is empty)', async () => {
    const invite = await callFrom('+442079460999');
    expect(invite).toMatch(/^From: <sip:\+442079460999@127\.0\.0\.1:\d+>;tag=/m);
  });
});
