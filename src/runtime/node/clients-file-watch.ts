// The clients file on Node (GATEWAY_CLIENTS_FILE): read at start (a wrong file stops the start with one line naming
// the field), then watched (fs.watch on its directory, which also sees a Kubernetes Secret's symlink swap) and
// read again on SIGHUP. A file that reads wrong on reload leaves the last good clients in place, logged and counted
// in callerid_gateway_clients_reloads_total{result="refused"}. Only a regular file (after its symlinks) of at most
// GATEWAY_CLIENTS_FILE_MAX_BYTES is read, and only through the thread pool: a FIFO, a device or a huge file is
// refused without stalling the event loop.
import { constants, open, type FileHandle } from 'node:fs/promises';
import { watch, type FSWatcher, type Stats } from 'node:fs';
import { basename, dirname } from 'node:path';
import { Counter, type Registry } from 'prom-client';
import type { ClientRegistry } from '../../auth/client-registry.js';
import { readClientsFile, type ClientsFileContents } from '../../auth/clients-file.js';
import { ConfigError, RESERVED_CLIENT_IDS } from '../../config/config.js';
import type { Logger } from '../../observability/logger.js';

const VARIABLE = 'GATEWAY_CLIENTS_FILE';

type Read<T> = ({ ok: true } & T) | { ok: false; problem: string };

/** What a file that is not a regular one is, for the refusal line. */
function kindOf(stat: Stats): string {
  if (stat.isDirectory()) return 'a directory';
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isSocket()) return 'a socket';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  return 'not a regular file';
}

/** The file's bytes up to `maxBytes`, or undefined past them: a size of 0 in its metadata (a /proc file) proves nothing. */
async function boundedBytes(file: FileHandle, maxBytes: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const chunk = Buffer.allocUnsafe(Math.min(64 * 1024, maxBytes + 1 - total));
    const { bytesRead } = await file.read(chunk, 0, chunk.length, null);
    if (bytesRead === 0) return Buffer.concat(chunks, total);
    chunks.push(chunk.subarray(0, bytesRead));
    total += bytesRead;
    if (total > maxBytes) return undefined;
  }
}

/** The text of the opened file if it is a regular one of at most `maxBytes` in UTF-8. */
async function textOfOpened(file: FileHandle, maxBytes: number): Promise<Read<{ text: string }>> {
  const stat = await file.stat();
  if (!stat.isFile()) return { ok: false, problem: `is ${kindOf(stat)}, not a regular file` };
  const tooLarge = { ok: false, problem: `is larger than GATEWAY_CLIENTS_FILE_MAX_BYTES (${maxBytes} bytes)` } as const;
  if (stat.size > maxBytes) return tooLarge;
  const bytes = await boundedBytes(file, maxBytes);
  if (bytes === undefined) return tooLarge;
  try {
    return { ok: true, text: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
  } catch {
    return { ok: false, problem: 'is not UTF-8 text' };
  }
}

/** The file's clients and issuers, or the one problem with it; never throws. */
async function readFrom(path: string, maxBytes: number): Promise<Read<ClientsFileContents>> {
  let file: FileHandle | undefined;
  try {
    // O_NONBLOCK: opening a FIFO to read would otherwise wait for a writer, holding a thread of the pool for good.
    file = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
    const read = await textOfOpened(file, maxBytes);
    return read.ok ? readClientsFile(read.text, RESERVED_CLIENT_IDS) : read;
  } catch (err) {
    return { ok: false, problem: `cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})` };
  } finally {
    await file?.close().catch(() => undefined);
  }
}

/** The clients and issuers of the file at start; a {@link ConfigError} naming the field when it is wrong. */
export async function loadClientsFile(path: string, maxBytes: number): Promise<ClientsFileContents> {
  const read = await readFrom(path, maxBytes);
  if (!read.ok) throw new ConfigError(VARIABLE, `${path}: ${read.problem}`);
  return { clients: read.clients, issuers: read.issuers };
}

interface ClientsFileWatch {
  /** Reads the file again now (what SIGHUP does); settles once it is applied or refused, never rejects. */
  reload(): Promise<void>;
  close(): void;
}

interface ClientsFileWatchOptions {
  path: string;
  /** GATEWAY_CLIENTS_FILE_MAX_BYTES. */
  maxBytes: number;
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
  // Reads may overlap (a change and a SIGHUP): only the latest one started is applied or counted.
  let latest = 0;
  let closed = false;
  const reload = async () => {
    const mine = ++latest;
    const read = await readFrom(path, options.maxBytes);
    if (closed || mine !== latest) return;
    if (!read.ok) {
      reloads.inc({ result: 'refused' });
      logger.error(
        { event: 'clients_reload_refused', problem: `${VARIABLE}: ${read.problem}` },
        'clients file not applied: the last good clients stay',
      );
      return;
    }
    registry.replace(read.clients, read.issuers);
    reloads.inc({ result: 'applied' });
    logger.info({ event: 'clients_reloaded', clients: read.clients.length }, 'clients file applied');
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const soon = () => {
    clearTimeout(timer);
    timer = setTimeout(() => void reload(), options.settleMs ?? 100);
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
  const onHangUp = () => void reload();
  process.on('SIGHUP', onHangUp);
  return {
    reload,
    close() {
      closed = true;
      clearTimeout(timer);
      watcher.close();
      process.off('SIGHUP', onHangUp);
    },
  };
}
