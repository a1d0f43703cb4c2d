// Runs the simulator of the Contact Lookup Service on its own (`npm run simulator`): the upstream a local Worker
// (`npx wrangler dev`, docs/workers.md) or a container deployment (config/compose.yaml) calls instead of the real one.
import { startSimulatorServer } from '../../simulator/server.js';

const env = process.env;
const port = Number(env.SIMULATOR_PORT ?? 9000);
const host = env.SIMULATOR_HOST ?? '127.0.0.1';
// The upstream credentials the gateway logs in with: the same defaults as .dev.vars.example and compose.yaml.
const clientId = env.UPSTREAM_CLIENT_ID || 'callerid-gateway';
const clientSecret = env.UPSTREAM_CLIENT_SECRET || 'simulator-only-not-a-secret';

const simulator = await startSimulatorServer({ host, port, clients: { [clientId]: clientSecret } });
console.log(`simulator of the Contact Lookup Service listening on ${simulator.url} (client id ${clientId})`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void simulator.close());
