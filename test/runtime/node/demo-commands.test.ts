// The demo's printed shell lines, run by bash with curl against a real gateway: a login that works searches, a
// login that fails says so and searches nothing.
import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoCommands } from '../../../src/runtime/node/demo.js';
import { checkRequirement, commandRequirement } from '../../helpers/requires.js';
import { CLIENTS, startStack, type Stack } from '../../helpers/stack.js';

const hasCurl = checkRequirement(commandRequirement('curl', ['--version'], 'the curl command'));

/** Runs the lines in bash without blocking this process, which serves the gateway. */
function paste(lines: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('bash', ['-c', lines.join('\n')], { encoding: 'utf8', timeout: 10_000 }, (err, stdout, stderr) =>
      resolve({ status: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }),
    );
  });
}

describe.skipIf(!hasCurl)('the demo commands', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack.close();
  });

  it('log in and print the search answer', async () => {
    const run = await paste(demoCommands(stack.gateway.url, 'crm', CLIENTS.crm));
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ query: { what: '+442079460001' } });
  });

  it('show a failed login as a failure with the gateway’s answer, and do not search', async () => {
    const before = stack.simulator.controls.stats().searchCalls;
    const run = await paste(demoCommands(stack.gateway.url, 'crm', 'not-the-secret'));
    expect(run.status).not.toBe(0);
    expect(run.stderr).toMatch(/failed: .*"error":"invalid_client"/);
    expect(run.stdout).toBe('');
    expect(stack.simulator.controls.stats().searchCalls).toBe(before);
  });
});
