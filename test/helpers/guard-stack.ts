// Helpers for the cost guard's integration tests: distinct numbers that each cost one upstream call, problem
// bodies, an admin's view of /admin/usage, a metric read from /metrics, and stacks (alone, or two on one
// simulator) closed after each test.
import { afterEach } from 'vitest';
import { startStack, type Stack } from './stack.js';

/** The `i`th number of an Ofcom drama range: possible, unlisted in the simulator, one upstream call each. */
export const missNumber = (i: number): string => `020 7946 ${String(1000 + i).slice(1)}`;

export async function problemType(res: Response): Promise<string> {
  const body = (await res.json()) as { type: string };
  return body.type.replace(/^.*\/problems#/, '');
}

export interface UsageBody {
  day: string;
  resetsAt: string;
  clients: { id: string; searches: number; upstreamCalls: number; quota: number | null; remaining: number | null }[];
  budget: { limit: number | null; used: number; remaining: number | null };
  breaker: { state: string; consecutiveFailures: number; retryAfterSeconds: number };
  cooldown: { active: boolean; retryAfterSeconds: number };
  concurrency: { limit: number; inFlight: number; queued: number };
  store: string;
}

export async function usageOf(stack: Stack): Promise<UsageBody> {
  const res = await fetch(`${stack.gateway.url}/admin/usage`, {
    headers: { authorization: `Bearer ${await stack.login('ops')}` },
  });
  if (res.status !== 200) throw new Error(`/admin/usage answered ${res.status}`);
  return (await res.json()) as UsageBody;
}

export async function metricValue(stack: Stack, series: string): Promise<number> {
  const text = await (await fetch(`${stack.gateway.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? Number.NaN : Number(line.split(' ').at(-1));
}

/** Seconds from now to the next UTC midnight. */
export const secondsToMidnight = (): number =>
  Math.ceil((Math.ceil(Date.now() / 86_400_000) * 86_400_000 - Date.now()) / 1000);

export { awayFromMinuteEnd } from './minute-window.js';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface StacksPerTest {
  /** A gateway and its own simulator (with `latencyMs`), closed after the test. */
  start(env: Record<string, string>, latencyMs?: number): Promise<Stack>;
  /** Two gateways sharing `env` and calling the first one's simulator, so its counts are the deployment's. */
  twoGateways(env: Record<string, string>): Promise<[Stack, Stack]>;
  /** Stacks closed after each test. */
  stacks: Stack[];
  /** Run after each test, once the stacks are closed. */
  cleanups: (() => Promise<void>)[];
}

/** Call at a test file's top level: what it starts is closed after each test. */
export function stacksPerTest(): StacksPerTest {
  const stacks: Stack[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(stacks.splice(0).map((s) => s.close()));
    await Promise.all(cleanups.splice(0).map((f) => f()));
  });
  const start = async (env: Record<string, string>, latencyMs = 0): Promise<Stack> => {
    const stack = await startStack({ env, simulator: { latencyMs } });
    stacks.push(stack);
    return stack;
  };
  return {
    stacks,
    cleanups,
    start,
    async twoGateways(env) {
      const a = await start(env);
      return [a, await start({ ...env, UPSTREAM_AUTH_URL: a.simulator.url, UPSTREAM_BASE_URL: a.simulator.url })];
    },
  };
}
