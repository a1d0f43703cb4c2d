// The Node log destination on a real pipe (a FIFO, both ends non-blocking as Node leaves a stdout pipe): lines are
// written in batches, in order and whole; a reader that stops reading never blocks the writer nor makes each retry
// cost more (the bytes handed to write() are recorded), and what it misses past the bound is counted and said once
// it reads again.
import { spawnSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { StringDecoder } from 'node:string_decoder';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Registry } from 'prom-client';
import { createMetrics } from '../../../src/observability/metrics.js';
import { createLogDestination } from '../../../src/runtime/node/log-destination.js';
import { createNodeLogger } from '../../../src/runtime/node/node-logger.js';

/** Every write() the destination makes, as (descriptor, bytes handed to the kernel): the real call, recorded. */
const writes = vi.hoisted(() => [] as Array<{ fd: number; length: number }>);
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const recorded = ((fd: number, buffer: NodeJS.ArrayBufferView, offset?: number, length?: number) => {
    writes.push({ fd, length: length ?? buffer.byteLength - (offset ?? 0) });
    return fs.writeSync(fd, buffer, offset, length);
  }) as typeof fs.writeSync;
  return { ...fs, writeSync: recorded, default: { ...fs, writeSync: recorded } };
});

interface Fifo {
  readFd: number;
  writeFd: number;
  /** Reads whatever the pipe holds now (never waits). */
  drain(): string;
}

const opened: Fifo[] = [];
let dir: string | undefined;

function fifo(): Fifo {
  dir ??= mkdtempSync(join(tmpdir(), 'callerid-log-fifo-'));
  const path = join(dir, `fifo-${opened.length}`);
  expect(spawnSync('mkfifo', [path]).status).toBe(0);
  // The reader first: opening the write end of a FIFO without one fails (ENXIO) in non-blocking mode.
  const readFd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  const writeFd = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
  const chunk = Buffer.alloc(65_536);
  // A character's bytes may straddle two reads.
  const decoder = new StringDecoder('utf8');
  const f: Fifo = {
    readFd,
    writeFd,
    drain() {
      let text = '';
      for (;;) {
        try {
          const n = readSync(readFd, chunk, 0, chunk.length, null);
          if (n === 0) return text;
          text += decoder.write(chunk.subarray(0, n));
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'EAGAIN') return text;
          throw err;
        }
      }
    },
  };
  opened.push(f);
  return f;
}

afterEach(() => {
  // Descriptor numbers come back in the next test.
  writes.length = 0;
  for (const f of opened.splice(0)) {
    closeSync(f.readFd);
    closeSync(f.writeFd);
  }
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const line = (i: number) =>
  `${JSON.stringify({ level: 'info', event: 'request', requestId: `r-${i}`, pad: 'x'.repeat(80) })}\n`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Reads the pipe until `done` says the text is complete (or 5 s pass), letting the destination's timers run. */
async function readUntil(f: Fifo, done: (text: string) => boolean): Promise<string> {
  let text = '';
  for (let waited = 0; !done(text) && waited < 5000; waited += 5) {
    text += f.drain();
    if (!done(text)) await sleep(5);
  }
  return text;
}

describe('the Node log destination', () => {
  it('writes lines in batches, in order, and what is left after flushMs without more lines', async () => {
    const f = fifo();
    const dest = createLogDestination({ fd: f.writeFd, batchChars: 4096, flushMs: 50 });
    for (let i = 0; i < 100; i++) dest.write(line(i));
    // Written as batches of at least 4096 characters: the last partial batch waits for its timer.
    const first = f.drain();
    expect(first.length).toBeGreaterThanOrEqual(4096);
    expect(first.length).toBeLessThan(100 * line(0).length);
    const rest = await readUntil(f, (t) => first.length + t.length >= 100 * line(0).length);
    expect((first + rest).split('\n').filter(Boolean)).toEqual(Array.from({ length: 100 }, (_, i) => line(i).trim()));
  });

  it('keeps writing without blocking while the reader does not read, then delivers every line in order', async () => {
    const f = fifo();
    const dest = createLogDestination({ fd: f.writeFd, batchChars: 4096, retryMs: 5 });
    // About 1 MiB: far more than the pipe holds (64 KiB), taken without a single blocking write.
    const count = 10_000;
    const started = performance.now();
    for (let i = 0; i < count; i++) expect(dest.write(line(i))).toBe(true);
    expect(performance.now() - started).toBeLessThan(2000);
    expect(dest.dropped).toBe(0);
    const text = await readUntil(f, (t) => t.split('\n').length > count);
    const lines = text.split('\n').filter(Boolean);
    expect(lines).toHaveLength(count);
    for (let i = 0; i < count; i += 997) expect(lines[i]).toBe(line(i).trim());
    expect(lines.at(-1)).toBe(line(count - 1).trim());
  });

  it('past maxPendingBytes drops new lines, counts them and says so once the reader is back', async () => {
    const f = fifo();
    const dest = createLogDestination({ fd: f.writeFd, batchChars: 4096, retryMs: 5, maxPendingBytes: 200_000 });
    const count = 5000; // about 500 KB: the pipe takes 64 KiB, 200 KB wait, the rest is dropped
    for (let i = 0; i < count; i++) dest.write(line(i));
    expect(dest.dropped).toBeGreaterThan(1000);
    const text = await readUntil(f, (t) => t.includes('log_lines_dropped'));
    const lines = text.split('\n').filter(Boolean);
    const report = JSON.parse(lines.at(-1)!) as { level: string; event: string; count: number };
    expect(report).toMatchObject({ level: 'warn', event: 'log_lines_dropped', count: dest.dropped });
    // What was kept is whole and in order: the first lines, none missing before the drop began.
    const kept = lines.slice(0, -1);
    expect(kept).toHaveLength(count - dest.dropped);
    expect(kept).toEqual(Array.from({ length: kept.length }, (_, i) => line(i).trim()));
  });

  it('the lines dropped reach callerid_gateway_log_lines_dropped_total through the Node logger', async () => {
    const f = fifo();
    const dest = createLogDestination({ fd: f.writeFd, batchChars: 4096, retryMs: 5, maxPendingBytes: 100_000 });
    const logger = createNodeLogger('info', dest);
    const registry = new Registry();
    const metrics = createMetrics({ registry });
    metrics.watch({ logLinesDropped: () => logger.dropped?.() ?? 0 });
    const scrape = async () => {
      const { values } = await registry.getSingleMetric('callerid_gateway_log_lines_dropped_total')!.get();
      return values[0]?.value;
    };
    expect(await scrape()).toBe(0);
    const count = 3000;
    for (let i = 0; i < count; i++) logger.info({ event: 'request', requestId: `r-${i}`, pad: 'x'.repeat(80) }, 'r');
    expect(dest.dropped).toBeGreaterThan(0);
    expect(await scrape()).toBe(dest.dropped);
    // Delivered + dropped = written, once the reader reads.
    const text = await readUntil(f, (t) => t.includes('log_lines_dropped'));
    const requests = text.split('\n').filter((l) => l.includes('"event":"request"'));
    expect(requests.length + dest.dropped).toBe(count);
    expect(await scrape()).toBe(dest.dropped);
  });

  it('delivers lines of any characters and length whole, the pipe full or not', async () => {
    const f = fifo();
    const dest = createLogDestination({ fd: f.writeFd, batchChars: 4096, retryMs: 5 });
    // Multi-byte text through the batch buffer, lines longer than its room, and more than the pipe holds at once.
    const lines = Array.from({ length: 3000 }, (_, i) =>
      i % 500 === 7 ? `${'Zoë ☎ 😀 '.repeat(4000)}${i}\n` : `{"name":"Café Zoë ☎ 😀","i":${i}}\n`,
    );
    for (const l of lines) expect(dest.write(l)).toBe(true);
    const want = lines.join('');
    const text = await readUntil(f, (t) => t.length >= want.length);
    expect(text).toBe(want);
  });

  it('a few lines written while earlier ones wait for the reader follow them, whole and in order', async () => {
    const f = fifo();
    const dest = createLogDestination({ fd: f.writeFd, batchChars: 4096, flushMs: 5, retryMs: 5 });
    // Far more than the pipe holds: the rest waits, and the retries find the pipe still full.
    const early = Array.from({ length: 10_000 }, (_, i) => line(i));
    for (const l of early) dest.write(l);
    await sleep(30);
    // A few short lines behind what waits, offered on the next retry, once the reader has begun to read.
    const late = Array.from({ length: 3 }, (_, i) => `{"late":${i},"name":"Zoë"}\n`);
    for (const l of late) dest.write(l);
    const want = [...early, ...late].join('');
    const text = await readUntil(f, (t) => t.length >= want.length);
    expect(text).toBe(want);
  });

  it('with megabytes waiting for a reader that never reads, each retry hands write() one bounded slice, no more', async () => {
    const f = fifo();
    const dest = createLogDestination({ fd: f.writeFd, batchChars: 4096, retryMs: 2, writeBytes: 16_384 });
    const mine = () => writes.filter((w) => w.fd === f.writeFd);
    // About 2 MiB: the pipe takes 64 KiB, the rest waits.
    const count = 20_000;
    for (let i = 0; i < count; i++) expect(dest.write(line(i))).toBe(true);
    const during = mine().length;
    // While lines were taken, each batch of 4 KiB went to write() once at most: nothing gathered was offered twice.
    const written = Array.from({ length: count }, (_, i) => line(i)).join('').length;
    expect(during).toBeLessThanOrEqual(Math.ceil(written / 4096));
    // Fifty retries with the pipe full: whatever waits (megabytes), each offers one slice of at most 16 KiB.
    for (let waited = 0; mine().length < during + 50 && waited < 5000; waited += 2) await sleep(2);
    const retries = mine().slice(during);
    expect(retries.length).toBeGreaterThanOrEqual(50);
    for (const w of retries) expect(w.length).toBeLessThanOrEqual(16_384);
    expect(dest.dropped).toBe(0);
    // The reader reads at last: every line, in order; delivered + dropped = written.
    const text = await readUntil(f, (t) => t.length >= written);
    const lines = text.split('\n').filter(Boolean);
    expect(lines.length + dest.dropped).toBe(count);
    expect(lines).toEqual(Array.from({ length: count }, (_, i) => line(i).trim()));
  });

  it('flushSync waits for a stuck reader at most exitWaitMs over all its calls', () => {
    const f = fifo();
    // A second of waiting: enough for several offers however long a loaded machine takes over the first.
    const dest = createLogDestination({ fd: f.writeFd, batchChars: 4096, exitWaitMs: 1000 });
    for (let i = 0; i < 5000; i++) dest.write(line(i));
    const mine = () => writes.filter((w) => w.fd === f.writeFd).length;
    const before = mine();
    // The first call spends the wait (offering again every few milliseconds); the ones after it offer once and return.
    dest.flushSync();
    const first = mine() - before;
    expect(first).toBeGreaterThan(1);
    for (const _ of [1, 2, 3]) {
      const at = mine();
      dest.flushSync();
      expect(mine() - at).toBe(1);
    }
  });

  it('flushSync writes what is gathered at once, for exit and crash handlers', () => {
    const f = fifo();
    const dest = createLogDestination({ fd: f.writeFd, batchChars: 1 << 20, flushMs: 60_000 });
    for (let i = 0; i < 10; i++) dest.write(line(i));
    expect(f.drain()).toBe('');
    dest.flushSync();
    expect(f.drain()).toBe(Array.from({ length: 10 }, (_, i) => line(i)).join(''));
  });

  it('a reader that has gone (EPIPE) ends the writing without an error thrown at the caller', () => {
    const f = fifo();
    const dest = createLogDestination({ fd: f.writeFd, batchChars: 10 });
    closeSync(f.readFd);
    opened.splice(opened.indexOf(f), 1);
    const sink = openSync('/dev/null', 'r');
    // Keep the afterEach's close balanced: the write end still closes there.
    opened.push({ ...f, readFd: sink });
    expect(() => dest.write(line(1))).not.toThrow();
    expect(dest.write(line(2))).toBe(false);
  });
});
