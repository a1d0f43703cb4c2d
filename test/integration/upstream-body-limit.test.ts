// An upstream answer larger than UPSTREAM_MAX_BODY_BYTES (default 1 MiB) is a 502, and the gateway stops
// reading it at the bound: over a real socket, from the simulator streaming 128 MiB.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetchHttp, UpstreamTransportError } from '../../src/base/upstream-http.js';
import { startStack, type Stack } from '../helpers/stack.js';

const MiB = 1024 * 1024;

describe('upstream answer size', () => {
  let stack: Stack;
  let token: string;

  beforeAll(async () => {
    // A generous deadline: the bound, not the timeout, must be what stops the read.
    stack = await startStack({ env: { UPSTREAM_TIMEOUT_MS: '20000' } });
    token = await stack.login();
  });
  afterAll(async () => {
    await stack.close();
  });

  it.each([
    ['chunked', false],
    ['with a Content-Length', true],
  ])(
    'answers 502 to a 128 MiB search answer sent %s, reading little of it and keeping memory flat',
    async (_how, declareLength) => {
      stack.simulator.controls.resetStats();
      stack.simulator.controls.setFaults({ hugeBody: { bytes: 128 * MiB, declareLength } });
      global.gc?.();
      const rssBefore = process.memoryUsage().rss;
      const started = performance.now();
      const res = await stack.search('020 7946 0005', token);
      const body = (await res.json()) as { status: number; detail: string };
      const elapsed = performance.now() - started;
      const grown = process.memoryUsage().rss - rssBefore;
      stack.simulator.controls.setFaults({ hugeBody: null });

      expect(res.status).toBe(502);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(body.detail).toMatch(/larger than/);
      // What the simulator handed to the socket: the bound plus what socket buffers hold, far from 128 MiB.
      expect(stack.simulator.controls.stats().hugeBodyBytesSent).toBeLessThan(16 * MiB);
      expect(grown).toBeLessThan(48 * MiB);
      expect(elapsed).toBeLessThan(5000);
      const failure = stack.logs.find(
        (l) => l.fields.event === 'upstream_search_failed' && l.fields.kind === 'too_large',
      );
      expect(failure).toBeDefined();
    },
  );

  it('still answers normally afterwards (the connection pool recovered)', async () => {
    const res = await stack.search('020 7946 0005', token);
    expect(res.status).toBe(200);
  });

  it.each([false, true])(
    'bounds the fetch transport (Workers) the same way (Content-Length declared: %s)',
    async (declareLength) => {
      stack.simulator.controls.resetStats();
      stack.simulator.controls.setFaults({ hugeBody: { bytes: 128 * MiB, declareLength } });
      const { access_token: upstreamToken } = (await (
        await fetch(`${stack.simulator.url}/token/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'grant_type=client_credentials&client_id=gateway-under-test&client_secret=upstream-secret-xyz',
        })
      ).json()) as { access_token: string };
      const http = createFetchHttp(fetch, { maxBodyBytes: 64 * 1024 });
      const failure = await http
        .request({
          method: 'GET',
          url: `${stack.simulator.url}/v2/contacts/search?what=%2B442079460005`,
          headers: { authorization: `Bearer ${upstreamToken}` },
          timeoutMs: 20_000,
        })
        .then(
          () => undefined,
          (err: unknown) => err,
        );
      stack.simulator.controls.setFaults({ hugeBody: null });
      expect(failure).toBeInstanceOf(UpstreamTransportError);
      expect((failure as UpstreamTransportError).kind).toBe('too_large');
      expect(stack.simulator.controls.stats().hugeBodyBytesSent).toBeLessThan(16 * MiB);
    },
  );
});
