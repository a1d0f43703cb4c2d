// Bench child: the limit for a miss on Node here, a bare node:http server that forwards `what` to the upstream
// over a keep-alive connection (BENCH_PROXY_CLIENT: `undici` or `http`) and answers its body.
import { createServer, Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent, request } from 'undici';

const base = process.env.UPSTREAM_BASE_URL;
const login = await fetch(`${process.env.UPSTREAM_AUTH_URL}/token/login`, {
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: process.env.UPSTREAM_CLIENT_ID,
    client_secret: process.env.UPSTREAM_CLIENT_SECRET,
  }),
});
const headers = { authorization: `Bearer ${(await login.json()).access_token}`, accept: 'application/json' };
const dispatcher = new Agent({ connections: 128, keepAliveTimeout: 30_000 });
const agent = new HttpAgent({ keepAlive: true, maxSockets: 128 });
const viaUndici = async (url) => (await request(url, { headers, dispatcher })).body.text();
const viaHttp = (url) =>
  new Promise((resolve, reject) => {
    httpRequest(url, { headers, agent }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve(text));
    })
      .on('error', reject)
      .end();
  });
const upstream = process.env.BENCH_PROXY_CLIENT === 'http' ? viaHttp : viaUndici;

const server = createServer((req, res) => {
  const url = req.url ?? '';
  const at = url.indexOf('what=');
  if (at === -1) {
    res.writeHead(404).end();
    return;
  }
  upstream(`${base}/v2/contacts/search?what=${url.slice(at + 5)}`).then(
    (body) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    },
    () => res.writeHead(502).end(),
  );
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send({ type: 'ready', url: `http://127.0.0.1:${server.address().port}` }));
process.on('message', (msg) => msg?.type === 'stop' && process.exit(0));
