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

/** The destination's settings, the batch being gathered, what waits for the reader, and the timer. */
interface Destination {
  fd: number;
  batchChars: number;
  flushMs: number;
  maxPendingBytes: number;
  retryMs: number;
  writeBytes: number;
  exitWaitLeftMs: number;
  /** The batch being gathered. */
  lines: string[];
  chars: number;
  /** Sealed batches the reader has not taken yet, oldest first; `offset` bytes of the first are written. */
  queue: Batch[];
  offset: number;
  queuedBytes: number;
  timer: NodeJS.Timeout | undefined;
  /** The delay `timer` was set with: a retry (or the next slice) does not wait behind a pending flush. */
  timerMs: number;
  dropped: number;
  droppedUnreported: number;
  closed: boolean;
  /** True when the last write() found the pipe full (or took only part): the next offer waits `retryMs`. */
  stalled: boolean;
}

export function createLogDestination(options: LogDestinationOptions = {}): LogDestination {
  const d: Destination = {
    fd: options.fd ?? 1,
    batchChars: options.batchChars ?? 16_384,
    flushMs: options.flushMs ?? LOG_FLUSH_MS,
    maxPendingBytes: options.maxPendingBytes ?? 8 * 1024 * 1024,
    retryMs: options.retryMs ?? 20,
    writeBytes: options.writeBytes ?? 65_536,
    exitWaitLeftMs: options.exitWaitMs ?? LOG_EXIT_WAIT_MS,
    lines: [],
    chars: 0,
    queue: [],
    offset: 0,
    queuedBytes: 0,
    timer: undefined,
    timerMs: 0,
    dropped: 0,
    droppedUnreported: 0,
    closed: false,
    stalled: false,
  };
  return {
    write: (line) => write(d, line),
    flushSync: () => flushSync(d),
    get dropped() {
      return d.dropped;
    },
  };
}

function write(d: Destination, line: string): boolean {
  if (d.closed || d.queuedBytes + d.chars > d.maxPendingBytes) {
    d.dropped++;
    if (!d.closed) d.droppedUnreported++;
    return false;
  }
  d.lines.push(line);
  d.chars += line.length;
  if (d.chars < d.batchChars) arm(d, d.flushMs);
  else if (d.queue.length === 0) {
    // Nothing waits for the reader: this batch goes now, and what the pipe does not take is offered again soon.
    if (!writeOut(d, 1)) arm(d, d.stalled ? d.retryMs : 0);
  } else {
    // Behind what waits: sealed, and written by the retries in turn.
    seal(d);
    arm(d, d.retryMs);
  }
  return true;
}

function flushSync(d: Destination): void {
  if (d.timer !== undefined) clearTimeout(d.timer);
  d.timer = undefined;
  const started = Date.now();
  while (!writeOut(d, Infinity) && Date.now() - started < d.exitWaitLeftMs) sleepSync(5);
  d.exitWaitLeftMs = Math.max(0, d.exitWaitLeftMs - (Date.now() - started));
  // Should the process go on after all, what is left is offered again as usual.
  if (!d.closed && d.queue.length > 0) arm(d, d.retryMs);
}

function arm(d: Destination, ms: number): void {
  if (d.timer !== undefined) {
    if (ms >= d.timerMs) return;
    clearTimeout(d.timer);
  }
  d.timerMs = ms;
  d.timer = setTimeout(() => onTimer(d), ms).unref();
}

function onTimer(d: Destination): void {
  d.timer = undefined;
  // One slice per turn of the event loop: a backlog the reader takes again drains between answers, not in one go.
  if (!writeOut(d, 1) && !d.closed && d.queue.length > 0) arm(d, d.stalled ? d.retryMs : 0);
}

function seal(d: Destination): void {
  if (d.lines.length === 0) return;
  const bytes = Buffer.from(d.lines.length === 1 ? d.lines[0]! : d.lines.join(''));
  d.queue.push({ bytes, lines: d.lines.length });
  d.queuedBytes += bytes.length;
  d.lines = [];
  d.chars = 0;
}

/**
 * Offers the queue, then the gathered lines, then the count of lines dropped, at most `calls` write()s of at most
 * `writeBytes` each; returns true when everything was taken. The gathered lines are sealed only once what waits
 * before them has gone: a retry against a full pipe copies nothing.
 */
function writeOut(d: Destination, calls: number): boolean {
  if (d.closed) return true;
  for (;;) {
    if (d.queue.length === 0) {
      seal(d);
      if (d.queue.length === 0) {
        if (d.droppedUnreported === 0) return true;
        // The reader is back: say how many lines it missed, then go on.
        d.lines.push(droppedLine(d.droppedUnreported));
        d.droppedUnreported = 0;
        seal(d);
      }
    }
    if (calls-- <= 0) return false;
    const taken = writeSlice(d);
    if (taken !== 'all') return taken === 'gone';
  }
}

/** One write() of the oldest batch's next slice: all of it taken, part (the pipe is full), or the reader gone. */
function writeSlice(d: Destination): 'all' | 'part' | 'gone' {
  const head = d.queue[0]!;
  const length = Math.min(head.bytes.length - d.offset, d.writeBytes);
  let n: number;
  try {
    n = writeSync(d.fd, head.bytes, d.offset, length);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EAGAIN' || code === 'EWOULDBLOCK') {
      d.stalled = true;
      return 'part';
    }
    // The reader is gone (EPIPE, a closed descriptor): nothing more can be written, what waits is lost.
    close(d);
    return 'gone';
  }
  d.offset += n;
  d.queuedBytes -= n;
  if (d.offset === head.bytes.length) {
    d.queue.shift();
    d.offset = 0;
  }
  // The pipe took part of it: it is full now.
  d.stalled = n < length;
  return d.stalled ? 'part' : 'all';
}

function close(d: Destination): void {
  d.closed = true;
  for (const batch of d.queue) d.dropped += batch.lines;
  d.dropped += d.lines.length;
  d.queue.length = 0;
  d.queuedBytes = 0;
  d.lines = [];
  d.chars = 0;
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
