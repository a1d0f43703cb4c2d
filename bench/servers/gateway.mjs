// Bench child: the gateway from dist/, configured by the environment the runner passes; answers memory and
// event-loop delay probes over IPC.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startNodeGateway } from '../../dist/runtime/node/gateway.js';

const gateway = await startNodeGateway(process.env);
/** The event loop's delay since the runner asked for it (`loop-delay-start`); off until then. */
const loop = { delay: undefined };
const ms = (ns) => ns / 1e6;

process.on('message', async (msg) => {
  if (msg?.type === 'memory') {
    // What the process keeps, not what V8 has not handed back yet: full collections, with pauses for V8 to
    // release the freed pages, until the resident size stops falling (at most 10 rounds).
    let previous = Infinity;
    for (let i = 0; i < 10 && process.memoryUsage.rss() < previous - 1024 * 1024; i++) {
      previous = process.memoryUsage.rss();
      globalThis.gc?.();
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const { rss, heapUsed, heapTotal, external } = process.memoryUsage();
    const cache = gateway.services.lookupCache;
    process.send({
      type: 'memory',
      rss,
      heapUsed,
      heapTotal,
      external,
      entries: cache.entries,
      bytes: cache.bytes,
      maxBytes: cache.maxBytes,
      revocations: gateway.services.revocations.list.size,
    });
  } else if (msg?.type === 'loop-delay-start') {
    loop.delay?.disable();
    loop.delay = monitorEventLoopDelay({ resolution: 1 });
    loop.delay.enable();
    process.send({ type: 'loop-delay-start' });
  } else if (msg?.type === 'loop-delay') {
    const h = loop.delay;
    const [p50, p99, max] = h ? [ms(h.percentile(50)), ms(h.percentile(99)), ms(h.max)] : [NaN, NaN, NaN];
    process.send({ type: 'loop-delay', p50, p99, max, samples: h?.count ?? 0 });
  } else if (msg?.type === 'stop') {
    await gateway.close({ timeoutMs: 1000 });
    process.exit(0);
  }
});
process.send({ type: 'ready', url: gateway.url });
