// Background work on Workers: handed to the current request's ctx.waitUntil, so the runtime keeps it running
// after the response, and the upstream time a request spent is counted in its own scope only.
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { createRequestScopes } from '../../../../src/runtime/workers/request-scope.js';
import { noopTelemetry } from '../../../../src/observability/telemetry.js';

describe('Workers background work', () => {
  it('keeps work started during a request alive through that request’s ctx.waitUntil', async () => {
    const scopes = createRequestScopes();
    const ctx = createExecutionContext();
    let done = false;
    await scopes.run(ctx, async () => {
      await Promise.resolve();
      scopes.background(new Promise<void>((resolve) => setTimeout(() => ((done = true), resolve()), 200)));
    });
    expect(done).toBe(false);
    await waitOnExecutionContext(ctx);
    expect(done).toBe(true);
  });

  it('does not let a failed background job reject anything', async () => {
    const scopes = createRequestScopes();
    const ctx = createExecutionContext();
    scopes.run(ctx, () => scopes.background(Promise.reject(new Error('refresh failed'))));
    await expect(waitOnExecutionContext(ctx)).resolves.toBeUndefined();
  });

  it('adds upstream time to the request that spent it', async () => {
    const scopes = createRequestScopes();
    const telemetry = scopes.timing(noopTelemetry);
    const [one, two] = [createExecutionContext(), createExecutionContext()];
    const spent = await Promise.all([
      scopes.run(one, async () => {
        telemetry.upstreamCall('token', 'ok', 0.02);
        await Promise.resolve();
        telemetry.upstreamCall('search', 'ok', 0.03);
        return scopes.current()!.upstreamMs;
      }),
      scopes.run(two, async () => {
        telemetry.upstreamCall('search', 'timeout', 1);
        return scopes.current()!.upstreamMs;
      }),
    ]);
    expect(spent[0]).toBeCloseTo(50);
    expect(spent[1]).toBeCloseTo(1_000);
  });
});
