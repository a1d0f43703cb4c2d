// Where the Node logger's lines go: gathered in memory and written to stdout in one system call per batch, from the
// main thread, as nginx writes its access log (`access_log ... buffer=16k flush=250ms`). On this kind of machine a
// system call costs more than a cache hit's own code, and an asynchronous fs.write also costs a thread-pool round
// trip (two context switches and a wake-up of the event loop): one write per 16 KiB of lines keeps both off the hit.
//
// A reader that stops reading (a stuck log collector) never stalls the gateway nor slows its answers: stdout is
// non-blocking, what the pipe does not take waits as a queue of sealed batches (each line copied once, into its batch),
// and each retry hands write() at most one bounded slice of the oldest batch, so a retry costs the same with 64 KiB
// or 8 MiB waiting. Past `maxPendingBytes` new lines are dropped and counted (one warning line says how many once the
// reader is back). Lines are never reordered or split.
import { writeSync } from 'node:fs';

/** The longest a line waits in memory before it is written, in milliseconds. */
const LOG_FLUSH_MS = 250;
/**
 * The longest the process waits, in total, for a reader that does not take the last lines when it exits (a signal,
 * a crash, the end of a shutdown): after this, what is still waiting is dropped and the process ends.
 */
export const LOG_EXIT_WAIT_MS = 2000;

export interface LogDestination {
  /** Takes one line (ending in a newline); never blocks. */
  write(line: string): boolean;
  /**
   * Writes everything kept, synchronously; for exit and crash handlers. Waits for a slow reader, at most `exitWaitMs`
   * over all calls together: once that is spent, later calls write what the pipe takes at once and return.
   */
  flushSync(): void;
  /** Lines dropped since the start: past the bound while the reader did not read, or once the reader had gone. */
  readonly dropped: number;
}

export interface LogDestinationOptions {
  fd?: number;
  /** A batch is written once this many characters have gathered. */
  batchChars?: number;
  flushMs?: number;
  /** Kept for a reader that does not read: beyond this, new lines are dropped. */
  maxPendingBytes?: number;
  /** How long flushSync waits, over all its calls, for a reader that does not take the lines. */
  exitWaitMs?: number;
  /** How soon a write the reader refused is offered again. */
  retryMs?: number;
  /** The most bytes handed to one write(): what one retry costs, however much waits. */
  writeBytes?: number;
}

/** Bytes waiting for the reader: whole lines, in order; `lines` of them. */
interface Batch {
  bytes: Buffer;
  lines: number;
}

const sleepSync = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

export function createLogDestination(options: LogDestinationOptions = {}): LogDestination {
  const fd = options.fd ?? 1;
  const batchChars = options.batchChars ?? 16_384;
  const flushMs = options.flushMs ?? LOG_FLUSH_MS;
  const maxPendingBytes = options.maxPendingBytes ?? 8 * 1024 * 1024;
  const retryMs = options.retryMs ?? 20;
  const writeBytes = options.writeBytes ?? 65_536;
  let exitWaitLeftMs = options.exitWaitMs ?? LOG_EXIT_WAIT_MS;

  /** The batch being gathered. */
  let lines: string[] = [];
  let chars = 0;
  /** Sealed batches the reader has not taken yet, oldest first; `offset` bytes of the first are written. */
  const queue: Batch[] = [];
  let offset = 0;
  let queuedBytes = 0;
  let timer: NodeJS.Timeout | undefined;
  let dropped = 0;
  let droppedUnreported = 0;
  let closed = false;
  /** True when the last write() found the pipe full (or took only part): the next offer waits `retryMs`. */
  let stalled = false;

  /** The delay `timer` was set with: a retry (or the next slice) does not wait behind a pending flush. */
  let timerMs = 0;

  function arm(ms: number): void {
    if (timer !== undefined) {
      if (ms >= timerMs) return;
      clearTimeout(timer);
    }
    timerMs = ms;
    timer = setTimeout(onTimer, ms).unref();
  }
  function onTimer(): void {
    timer = undefined;
    // One slice per turn of the event loop: a backlog the reader takes again drains between answers, not in one go.
    if (!writeOut(1) && !closed && queue.length > 0) arm(stalled ? retryMs : 0);
  }

  function seal(): void {
    if (lines.length === 0) return;
    const bytes = Buffer.from(lines.length === 1 ? lines[0]! : lines.join(''));
    queue.push({ bytes, lines: lines.length });
    queuedBytes += bytes.length;
    lines = [];
    chars = 0;
  }

  /**
   * Offers the queue, then the gathered lines, then the count of lines dropped, at most `calls` write()s of at most
   * `writeBytes` each; returns true when everything was taken. The gathered lines are sealed only once what waits
   * before them has gone: a retry against a full pipe copies nothing.
   */
  function writeOut(calls: number): boolean {
    if (closed) return true;
    for (;;) {
      if (queue.length === 0) {
        seal();
        if (queue.length === 0) {
          if (droppedUnreported === 0) return true;
          // The reader is back: say how many lines it missed, then go on.
          lines.push(droppedLine(droppedUnreported));
          droppedUnreported = 0;
          seal();
        }
      }
      if (calls-- <= 0) return false;
      const head = queue[0]!;
      const length = Math.min(head.bytes.length - offset, writeBytes);
      let n: number;
      try {
        n = writeSync(fd, head.bytes, offset, length);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EAGAIN' || code === 'EWOULDBLOCK') {
          stalled = true;
          return false;
        }
        // The reader is gone (EPIPE, a closed descriptor): nothing more can be written, what waits is lost.
        close();
        return true;
      }
      offset += n;
      queuedBytes -= n;
      if (offset === head.bytes.length) {
        queue.shift();
        offset = 0;
      }
      if (n < length) {
        // The pipe took part of it: it is full now.
        stalled = true;
        return false;
      }
      stalled = false;
    }
  }

  function close(): void {
    closed = true;
    for (const batch of queue) dropped += batch.lines;
    dropped += lines.length;
    queue.length = 0;
    queuedBytes = 0;
    lines = [];
    chars = 0;
  }

  return {
    write(line) {
      if (closed || queuedBytes + chars > maxPendingBytes) {
        dropped++;
        if (!closed) droppedUnreported++;
        return false;
      }
      lines.push(line);
      chars += line.length;
      if (chars < batchChars) arm(flushMs);
      else if (queue.length === 0) {
        // Nothing waits for the reader: this batch goes now, and what the pipe does not take is offered again soon.
        if (!writeOut(1)) arm(stalled ? retryMs : 0);
      } else {
        // Behind what waits: sealed, and written by the retries in turn.
        seal();
        arm(retryMs);
      }
      return true;
    },
    flushSync() {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      const started = Date.now();
      while (!writeOut(Infinity) && Date.now() - started < exitWaitLeftMs) sleepSync(5);
      exitWaitLeftMs = Math.max(0, exitWaitLeftMs - (Date.now() - started));
      // Should the process go on after all, what is left is offered again as usual.
      if (!closed && queue.length > 0) arm(retryMs);
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
