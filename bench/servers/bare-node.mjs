// Bench child: the limit for Node here, a bare node:http server answering the same body from a Map.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const body = readFileSync(process.env.BENCH_BODY_FILE, 'utf8');
const bodies = new Map([[process.env.BENCH_NUMBER, body]]);

const server = createServer((req, res) => {
  const url = req.url ?? '';
  const at = url.indexOf('what=');
  const found = at === -1 ? undefined : bodies.get(decodeURIComponent(url.slice(at + 5)));
  if (found === undefined) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(found) });
  res.end(found);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send({ type: 'ready', url: `http://127.0.0.1:${server.address().port}` }));
process.on('message', (msg) => msg?.type === 'stop' && process.exit(0));
