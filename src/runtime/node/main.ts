// The Node entry point: reads process.env, starts the gateway, prints the demo walk-through, stops on signals.
import { ConfigError } from '../../config/config.js';
import { demoCommands } from './demo.js';
import { startNodeGateway } from './gateway.js';

async function main(): Promise<void> {
  const gateway = await startNodeGateway(process.env);
  if (gateway.demo) {
    const { clientId, clientSecret } = gateway.demo;
    const base = `http://localhost:${gateway.port}`;
    process.stdout.write(
      [
        '',
        'callerid-gateway is running in DEMO MODE against its built-in simulator (fictional data).',
        `  demo client id:     ${clientId}`,
        `  demo client secret: ${clientSecret}`,
        `  console:            ${base}/console`,
        `  metrics:            http://localhost:${gateway.metricsServer?.port ?? gateway.port}/metrics`,
        '',
        'Try it (paste into a shell):',
        ...demoCommands(base, clientId, clientSecret),
        '',
      ].join('\n'),
    );
  }
  const { logger } = gateway.services;
  // The log is written through a buffer: whatever way the process ends, the buffered lines are written first.
  process.on('exit', () => logger.flush?.());
  process.on('uncaughtException', (err) => {
    logger.error(
      { event: 'crash', error: err instanceof Error ? err.message : String(err) },
      'uncaught exception: exiting',
    );
    logger.flush?.();
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn(
        { event: 'shutdown_forced', signal },
        'second signal: exiting without waiting for in-flight requests',
      );
      logger.flush?.();
      process.exit(1);
    }
    stopping = true;
    const timeoutMs = gateway.config.shutdownTimeoutSeconds * 1000;
    logger.info(
      { event: 'shutdown', signal, timeoutMs },
      'shutting down: no new connections, finishing in-flight requests',
    );
    // Should releasing the upstream pool itself hang, the process still ends shortly after the bound.
    setTimeout(() => {
      logger.warn({ event: 'shutdown_overrun' }, 'shutdown did not finish in time; exiting');
      logger.flush?.();
      process.exit(0);
    }, timeoutMs + 5_000).unref();
    gateway.close({ timeoutMs }).then(
      ({ forced }) => {
        logger.info(
          { event: 'stopped', forced },
          forced
            ? 'stopped; requests still running at the bound were cut'
            : 'stopped after in-flight requests finished',
        );
        logger.flush?.();
        process.exit(0);
      },
      (err: unknown) => {
        logger.error(
          { event: 'shutdown_failed', error: err instanceof Error ? err.message : String(err) },
          'shutdown failed',
        );
        logger.flush?.();
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n`);
  } else {
    process.stderr.write(`callerid-gateway failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  }
  process.exit(1);
});
