// Runs the Contact Lookup Service simulator on a real Node HTTP port (demo mode, integration tests, benchmarks).
import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createSimulator, type SimulatorControls, type SimulatorOptions } from './simulator-app.js';

export interface SimulatorServerOptions extends SimulatorOptions {
  /** Default 0: a free port chosen by the OS. */
  port?: number;
  /** Default 127.0.0.1: the simulator is never meant to be reachable from elsewhere. */
  host?: string;
}

export interface SimulatorServer {
  /** Base URL without a trailing slash, usable as both `{auth_url}` and `{base_url}`. */
  url: string;
  port: number;
  controls: SimulatorControls;
  close(): Promise<void>;
}

export function startSimulatorServer(options: SimulatorServerOptions = {}): Promise<SimulatorServer> {
  const { port = 0, host = '127.0.0.1', ...simulatorOptions } = options;
  const { app, controls } = createSimulator(simulatorOptions);

  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    const onListening = (info: AddressInfo) => {
      server.off('error', onError);
      const urlHost = info.family === 'IPv6' ? `[${info.address}]` : info.address;
      let closing: Promise<void> | undefined;
      resolve({
        url: `http://${urlHost}:${info.port}`,
        port: info.port,
        controls,
        close: () => (closing ??= closeServer(server)),
      });
    };
    // serve() without createServer/serverOptions always builds a node:http Server.
    const server = serve({ fetch: app.fetch, port, hostname: host }, onListening) as Server;
    server.once('error', onError);
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((err) => (err ? reject(err) : resolve()));
    // close() only stops accepting; keep-alive and hung requests would hold it open forever.
    server.closeAllConnections();
  });
}
