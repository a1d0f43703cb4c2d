// The Node entry point: reads process.env, starts the gateway, prints the demo walk-through, stops on signals.
import { ConfigError } from '../config.js';
import { startNodeGateway } from './node-gateway.js';

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
        '',
        'Try it (paste into a shell):',
        `  TOKEN=$(curl -s -X POST ${base}/token/login -d grant_type=client_credentials -d client_id=${clientId} -d client_secret=${clientSecret} | sed -E 's/.*"access_token":"([^"]+)".*/\\1/')`,
        `  curl -s "${base}/v2/contacts/search?what=020%207946%200001" -H "Authorization: Bearer $TOKEN"`,
        '',
      ].join('\n'),
    );
  }
  const stop = (signal: string) => {
    process.stdout.write(`received ${signal}, shutting down\n`);
    void gateway.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n`);
  } else {
    process.stderr.write(`callerid-gateway failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  }
  process.exit(1);
});
