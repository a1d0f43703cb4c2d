// The one reader of request bodies, in process (as on Workers): a body whose stream fails is the client's abort (499),
// a refusal the runtime failed it with stays that refusal, and neither is an internal error.
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import type { AppEnv } from '../http/app-env.js';
import { errorResponse } from '../app/error-response.js';
import { GatewayError } from '../base/errors.js';
import { requestBodyLimit } from './body-limit.js';
import { captureLogger } from '../../test/helpers/recorders.js';

function appReadingBodies() {
  const logger = captureLogger();
  const app = new Hono<AppEnv>();
  app.use(async (c, next) => {
    c.set('requestId', 'rid-1');
    await next();
  });
  app.use(requestBodyLimit(() => 4096));
  app.post('/text', async (c) => c.text(await c.req.text()));
  app.post('/json', async (c) => c.json(await c.req.json()));
  app.onError((err, c) => errorResponse(err, c.get('requestId'), logger));
  return { app, logs: logger.lines };
}

/** A body that gives `first`, then fails with `failure`. */
function failingBody(first: string, failure: unknown): ReadableStream<Uint8Array> {
  let sent = false;
  return new ReadableStream({
    pull(controller) {
      if (sent) controller.error(failure);
      else controller.enqueue(new TextEncoder().encode(first));
      sent = true;
    },
  });
}

const post = (path: string, body: ReadableStream<Uint8Array>, headers: Record<string, string>) =>
  new Request(`http://x${path}`, { method: 'POST', body, headers, duplex: 'half' } as RequestInit);

describe('a request body that fails to arrive whole', () => {
  it.each([
    ['/text', { 'content-length': '100' }],
    ['/json', { 'content-length': '100' }],
    ['/text', { 'transfer-encoding': 'chunked' }],
  ])('is answered 499 on %s (%j), with no internal error logged', async (path, headers) => {
    const { app, logs } = appReadingBodies();
    const res = await app.fetch(post(path, failingBody('{"a":', new Error('aborted')), headers));
    expect(res.status).toBe(499);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(await res.json()).toMatchObject({ status: 499, requestId: 'rid-1' });
    expect(logs).toEqual([]);
  });

  it('keeps the refusal the runtime failed it with (a body too slow: 408)', async () => {
    const { app } = appReadingBodies();
    const slow = new GatewayError('request_timeout', 'too slow');
    const res = await app.fetch(post('/text', failingBody('abc', slow), { 'content-length': '100' }));
    expect(res.status).toBe(408);
  });

  it('reads a whole body as before', async () => {
    const { app } = appReadingBodies();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('hello'));
        controller.close();
      },
    });
    const res = await app.fetch(post('/text', body, { 'content-length': '5' }));
    expect(await res.text()).toBe('hello');
  });
});
