// Tests that need a real part (Chromium, promtool, Redis, workerd) run when it is there; where it is
// missing they are skipped with a message naming it, except under CI=true, where a missing part fails.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createConnection } from 'node:net';

export interface Requirement {
  /** True when the part is present. */
  present: boolean;
  /** What is missing, for the skip message. */
  missing: string;
}

export function commandRequirement(command: string, args: string[], missing: string): Requirement {
  try {
    execFileSync(command, args, { stdio: 'ignore', timeout: 20_000 });
    return { present: true, missing };
  } catch {
    return { present: false, missing };
  }
}

export function fileRequirement(path: string, missing: string): Requirement {
  return { present: existsSync(path), missing };
}

export async function tcpRequirement(host: string, port: number, missing: string): Promise<Requirement> {
  const present = await new Promise<boolean>((resolve) => {
    const socket = createConnection({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
  return { present, missing };
}

/**
 * Returns true when the tests may run. Missing outside CI: warns and returns false (use with
 * `describe.skipIf(!ok)`). Missing with CI=true: throws, so the run fails instead of passing quietly.
 */
export function checkRequirement(req: Requirement): boolean {
  if (req.present) return true;
  if (process.env.CI === 'true') {
    throw new Error(`required for this test under CI=true but missing: ${req.missing}`);
  }
  console.warn(`SKIPPED: missing ${req.missing}`);
  return false;
}
