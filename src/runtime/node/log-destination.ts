// Where the Node logger's lines go: gathered in memory and written to stdout in one system call per batch, from the
// main thread, as nginx writes its access log (`access_log ... buffer=16k flush=250ms`). On this kind of machine a
// system call costs more than a cache hit's own code, and an asynchronous fs.write also costs a thread-pool round
// trip (two context switches and a wake-up of the event loop): one write per 16 KiB of lines keeps both off the hit.
//
// A reader that stops reading (a stuck log collector) never stalls the gateway: stdout is non-blocking, what the pipe
// does not take now is kept and offered again shortly, and past `maxPendingBytes` new lines are dropped and counted
// (one warning line says how many once the reader is back). Lines are never reordered or split.
import { writeSync } from 'node:fs';

/** The longest a line waits in memory before it is written, in milliseconds. */
export const LOG_FLUSH_MS = 250;

export interface LogDestination {
  /** Takes one line (ending in a newline); never blocks. */
  write(line: string): boolean;
  /** Writes everything kept, synchronously; for exit and crash handlers (waits up to `exitWaitMs` for a slow reader). */
  flushSync(): void;
  /** Lines dropped since the start because the reader kept too much waiting. */
  readonly dropped: number;
}

export interface LogDestinationOptions {
  fd?: number;
  /** A batch is written once this many characters have gathered. */
  batchChars?: number;
  flushMs?: number;
  /** Kept for a reader that does not read: beyond this, new lines are dropped. */
  maxPendingBytes?: number;
  /** How long flushSync waits for a reader that does not take the lines. */
  exitWaitMs?: number;
  /** How soon a write the reader refused is offered again. */
  retryMs?: number;
}

const sleepSync = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

export function createLogDestination(options: LogDestinationOptions = {}): LogDestination {
  const fd = options.fd ?? 1;
  const batchChars = options.batchChars ?? 16_384;
  const flushMs = options.flushMs ?? LOG_FLUSH_MS;
  const maxPendingBytes = options.maxPendingBytes ?? 8 * 1024 * 1024;
  const exitWaitMs = options.exitWaitMs ?? 2000;
  const retryMs = options.retryMs ?? 20;

  let lines: string[] = [];
  let chars = 0;
  /** Bytes the reader has not taken yet, in order, before any of `lines`. */
  let backlog: Buffer | undefined;
  let timer: NodeJS.Timeout | undefined;
  let dropped = 0;
  let droppedUnreported = 0;
  let closed = false;

  function arm(ms: number): void {
    if (timer === undefined) timer = setTimeout(onTimer, ms).unref();
  }
  function onTimer(): void {
    timer = undefined;
    writeOut();
  }

  /** Offers `backlog` and then the gathered lines; returns false when the reader took less than all of it. */
  function writeOut(): boolean {
    if (closed) return true;
    if (lines.length > 0) {
      const text = lines.join('');
      lines = [];
      chars = 0;
      const bytes = Buffer.from(text);
      backlog = backlog === undefined ? bytes : Buffer.concat([backlog, bytes]);
    }
    const buf = backlog;
    if (buf === undefined) return true;
    let offset = 0;
    try {
      while (offset < buf.length) offset += writeSync(fd, buf, offset, buf.length - offset);
      backlog = undefined;
      if (droppedUnreported > 0) {
        // The reader is back: say how many lines it missed, then go on.
        backlog = Buffer.from(droppedLine(droppedUnreported));
        droppedUnreported = 0;
        return writeOut();
      }
      return true;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      backlog = buf.subarray(offset);
      if (code === 'EAGAIN' || code === 'EWOULDBLOCK') {
        arm(retryMs);
        return false;
      }
      // The reader is gone (EPIPE, a closed descriptor): nothing more can be written.
      closed = true;
      backlog = undefined;
      return true;
    }
  }

  return {
    write(line) {
      if (closed) return false;
      if ((backlog?.length ?? 0) + chars > maxPendingBytes) {
        dropped++;
        droppedUnreported++;
        return false;
      }
      lines.push(line);
      chars += line.length;
      if (chars >= batchChars && backlog === undefined) writeOut();
      else arm(flushMs);
      return true;
    },
    flushSync() {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      const deadline = Date.now() + exitWaitMs;
      while (!writeOut() && Date.now() < deadline) sleepSync(5);
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    },
    get dropped() {
      return dropped;
    },
  };
}

function droppedLine(count: number): string {
  return `${JSON.stringify({
    level: 'warn',
    time: new Date().toISOString(),
    service: 'callerid-gateway',
    event: 'log_lines_dropped',
    count,
    msg: 'log lines dropped: stdout was not read',
  })}\n`;
}
