// A name the gateway no longer reads stops the Worker's start inside workerd as any wrong setting does: one line
// naming it and what replaced it, and the Worker answers 503 problem+json instead of running with it ignored.
import { createExecutionContext } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import worker from '../../../../src/runtime/workers/main.js';
import { bindings, isolate } from './control.js';

describe('a Worker bound with a name it no longer reads', () => {
  it('refuses to build, with one line pointing to the replacement', async () => {
    await expect(isolate({ QUOTA_ON_STORE_ERROR: 'closed' })).rejects.toThrow(
      'configuration error: QUOTA_ON_STORE_ERROR: is no longer read: use LIMITS_ON_STORE_ERROR (the console limits, quotas and budget)',
    );
  });

  it('answers 503 problem+json rather than run without it', async () => {
    const res = await worker.fetch(
      new Request('https://callerid.test/health'),
      { ...bindings, CONSOLE_RATE_KEY_PREFIX: 'callerid:console-rl' },
      createExecutionContext(),
    );
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(((await res.json()) as { detail: string }).detail).toMatch(/not configured correctly/);
  });
});
