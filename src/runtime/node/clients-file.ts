// The clients file on Node (GATEWAY_CLIENTS_FILE): read at start (a wrong file stops the start with one line naming
// the field), then watched (fs.watch on its directory, which also sees a Kubernetes Secret's symlink swap) and
// read again on SIGHUP. A file that reads wrong on reload leaves the last good clients in place, logged and counted
// in callerid_gateway_clients_reloads_total{result="refused"}.
import { readFileSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { Counter, type Registry } from 'prom-client';
import type { ClientRegistry } from '../../auth/client-registry.js';
import { readClientsFile, type ClientEntry } from '../../auth/clients-file.js';
import { ConfigError, RESERVED_CLIENT_IDS } from '../../config.js';
import type { Logger } from '../../observability/logger.js';

const VARIABLE = 'GATEWAY_CLIENTS_FILE';

/** The file's clients, or the one problem with it. */
function readFrom(path: string): { ok: true; clients: ClientEntry[] } | { ok: false; problem: string } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    return { ok: false, problem: `cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})` };
  }
  return readClientsFile(text, RESERVED_CLIENT_IDS);
}

/** The clients of the file at start; a {@link ConfigError} naming the field when it is wrong. */
export function loadClientsFile(path: string): ClientEntry[] {
  const read = readFrom(path);
  if (!read.ok) throw new ConfigError(VARIABLE, `${path}: ${read.problem}`);
  return read.clients;
}

interface ClientsFileWatch {
  /** Reads the file again now (what SIGHUP does). */
  reload(): void;
  close(): void;
}

interface ClientsFileWatchOptions {
  path: string;
  registry: ClientRegistry;
  logger: Logger;
  /** Where the reload counter is registered (the gateway's metrics registry). */
  metrics: Registry;
  /** Changes within this long are read once; default 100 ms. */
  settleMs?: number;
}

export function watchClientsFile(options: ClientsFileWatchOptions): ClientsFileWatch {
  const { path, registry, logger } = options;
  const reloads =
    (options.metrics.getSingleMetric('callerid_gateway_clients_reloads_total') as Counter | undefined) ??
    new Counter({
      name: 'callerid_gateway_clients_reloads_total',
      help: 'Reloads of the clients file (GATEWAY_CLIENTS_FILE): applied, or refused (the last good clients kept).',
      labelNames: ['result'],
      registers: [options.metrics],
    });
  const reload = () => {
    const read = readFrom(path);
    if (!read.ok) {
      reloads.inc({ result: 'refused' });
      logger.error(
        { event: 'clients_reload_refused', problem: `${VARIABLE}: ${read.problem}` },
        'clients file not applied: the last good clients stay',
      );
      return;
    }
    registry.replace(read.clients);
    reloads.inc({ result: 'applied' });
    logger.info({ event: 'clients_reloaded', clients: read.clients.length }, 'clients file applied');
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const soon = () => {
    clearTimeout(timer);
    timer = setTimeout(reload, options.settleMs ?? 100);
  };
  // The directory, not the file: an editor's rename or a Secret's symlink swap replaces the file itself.
  const watcher: FSWatcher = watch(dirname(path), (_event, name) => {
    if (name === null || name === basename(path) || name.startsWith('..')) soon();
  });
  watcher.on('error', (err) =>
    logger.warn(
      { event: 'clients_watch_failed', err: err.message },
      'clients file no longer watched; SIGHUP reloads it',
    ),
  );
  process.on('SIGHUP', reload);
  return {
    reload,
    close() {
      clearTimeout(timer);
      watcher.close();
      process.off('SIGHUP', reload);
    },
  };
}
