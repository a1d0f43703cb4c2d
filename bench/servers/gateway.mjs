// Bench child: the gateway from dist/, configured by the environment the runner passes; answers memory probes over IPC.
import { startNodeGateway } from '../../dist/runtime/node-gateway.js';

const gateway = await startNodeGateway(process.env);

process.on('message', async (msg) => {
  if (msg?.type === 'memory') {
    globalThis.gc?.();
    await new Promise((resolve) => setTimeout(resolve, 50));
    globalThis.gc?.();
    const { rss, heapUsed, heapTotal, external } = process.memoryUsage();
    const cache = gateway.services.lookupCache;
    process.send({ type: 'memory', rss, heapUsed, heapTotal, external, entries: cache.entries, bytes: cache.bytes, maxBytes: cache.maxBytes });
  } else if (msg?.type === 'stop') {
    await gateway.close({ timeoutMs: 1000 });
    process.exit(0);
  }
});
process.send({ type: 'ready', url: gateway.url });
