// Bench child: a bare Hono handler on @hono/node-server answering the same body from a Map.
import { readFileSync } from 'node:fs';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

const body = readFileSync(process.env.BENCH_BODY_FILE, 'utf8');
const bodies = new Map([[process.env.BENCH_NUMBER, body]]);

const app = new Hono();
app.get('/v2/contacts/search', (c) => {
  const found = bodies.get(c.req.query('what') ?? '');
  return found === undefined ? c.body(null, 404) : c.body(found, 200, { 'content-type': 'application/json' });
});
const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) =>
  process.send({ type: 'ready', url: `http://127.0.0.1:${info.port}` }),
);
server.keepAliveTimeout = 60_000;
process.on('message', (msg) => msg?.type === 'stop' && process.exit(0));
