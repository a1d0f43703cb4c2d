// Graceful close of a Node HTTP server: stop accepting, let in-flight requests finish, drop idle keep-alive
// connections as they become idle, and force-close what is left when the bound passes.
import type { ServerType } from '@hono/node-server';
import type { Server } from 'node:http';

/** How often idle keep-alive connections are dropped while waiting: a finished response frees its socket this fast. */
const IDLE_SWEEP_MS = 50;

export interface CloseResult {
  /** True when requests were still running at the bound and their connections were cut. */
  forced: boolean;
}

export function closeGracefully(server: ServerType, timeoutMs: number): Promise<CloseResult> {
  const http = server as Partial<Pick<Server, 'closeIdleConnections' | 'closeAllConnections'>>;
  return new Promise((resolve) => {
    let forced = false;
    const sweep = setInterval(() => http.closeIdleConnections?.(), IDLE_SWEEP_MS);
    const bound = setTimeout(
      () => {
        forced = true;
        http.closeAllConnections?.();
      },
      Math.max(0, timeoutMs),
    );
    server.close(() => {
      clearInterval(sweep);
      clearTimeout(bound);
      resolve({ forced });
    });
    http.closeIdleConnections?.();
  });
}
