// A collector that answers to harm the gateway, on loopback: a 200 with a body of a gibibyte, a gzip bomb, a 307 to
// another origin and a 302. The exporter reads at most a small answer, never unpacks one, follows no redirect, and
// counts each batch as dropped; the other origin receives nothing. Each holds through both runtimes' clients.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { createGzip, gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { readWithin } from '../../../src/base/bounded-body.js';
import { parseConfig, type TracingConfig } from '../../../src/config/config.js';
import type { ExportHttp } from '../../../src/observability/tracing/otlp-http.js';
import { createTracing } from '../../../src/observability/tracing/tracing.js';
import { droppedBy } from '../../helpers/dropped-spans.js';
import { EXPORT_CLIENTS, fetchExportHttp, tracingRuntime } from '../../helpers/export-clients.js';

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;
const CHUNK = Buffer.alloc(64 * 1024, 0x61);

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
}

interface Collector {
  origin: string;
  seen: Seen[];
  /** Bytes the collector managed to hand to its socket (after compression, for the bomb). */
  written: { bytes: number; unpacked: number };
  close(): Promise<void>;
}

const open: Collector[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

async function startCollector(
  answer: (res: ServerResponse, written: Collector['written']) => void,
): Promise<Collector> {
  const seen: Seen[] = [];
  const written = { bytes: 0, unpacked: 0 };
  const server: Server = createServer((req, res) => {
    seen.push({ method: req.method!, url: req.url!, headers: req.headers });
    req.resume();
    req.once('end', () => answer(res, written));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const collector: Collector = {
    origin: `http://127.0.0.1:${port}`,
    seen,
    written,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  open.push(collector);
  return collector;
}

/** `total` bytes of `chunk`, produced only as fast as they are taken (nothing is held in advance). */
function lazily(total: number, onChunk: (bytes: number) => void): Readable {
  let left = total;
  return new Readable({
    read() {
      if (left <= 0) return void this.push(null);
      const chunk = left >= CHUNK.length ? CHUNK : CHUNK.subarray(0, left);
      left -= chunk.length;
      onChunk(chunk.length);
      this.push(chunk);
    },
  });
}

/** Streams `source` into `res`, counting what reached the socket; stops when the gateway goes away. */
function streamInto(res: ServerResponse, source: Readable, written: Collector['written']): void {
  source.on('data', (chunk: Buffer) => {
    if (!res.write(chunk, () => (written.bytes += chunk.length))) {
      source.pause();
      res.once('drain', () => source.resume());
    }
  });
  source.once('end', () => res.end());
  res.once('close', () => source.destroy());
}

function tracingTo(url: string, protocol: string, http: ExportHttp): ReturnType<typeof createTracing> {
  const config: TracingConfig | null = parseConfig({
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: url,
    OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
    OTEL_EXPORTER_OTLP_HEADERS: 'api-key=collector-secret-4711',
    OTEL_EXPORTER_OTLP_TIMEOUT: '15000',
    OTEL_BSP_SCHEDULE_DELAY: '0',
  }).tracing;
  if (config === null) throw new Error('tracing is off');
  return createTracing(config, tracingRuntime(http));
}

/** Ends `count` spans and waits until their export is done. */
async function exportSpans(tracing: ReturnType<typeof createTracing>, count: number): Promise<void> {
  for (let i = 0; i < count; i++) tracing.tracer.startSpan('hostile', undefined).end();
  await tracing.flush();
}

const memory = () => {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

describe.each(EXPORT_CLIENTS)('a hostile collector, through %s', (_, http) => {
  it('answering 200 with a 1 GiB body: the exporter stops reading early, fails the export and drops its spans', async () => {
    const collector = await startCollector((res, written) => {
      res.writeHead(200, { 'content-type': 'application/x-protobuf' });
      streamInto(
        res,
        lazily(GIB, () => undefined),
        written,
      );
    });
    const tracing = tracingTo(`${collector.origin}/v1/traces`, 'http/protobuf', http);
    const before = memory();
    await exportSpans(tracing, 5);
    const grown = memory() - before;

    expect(droppedBy(tracing.dropped())).toEqual({ bad_answer: 5 });
    // What the socket buffers hold at most, not a gibibyte: the stream was cancelled once past its bound.
    expect(collector.written.bytes).toBeLessThan(64 * MIB);
    expect(grown).toBeLessThan(64 * MIB);
    expect(collector.seen[0]!.headers['accept-encoding']).toBe('identity');
  });

  it('answering a gzip bomb: nothing is unpacked, the export fails and its spans are dropped', async () => {
    const collector = await startCollector((res, written) => {
      res.writeHead(200, { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' });
      const zeros = lazily(GIB, (bytes) => (written.unpacked += bytes));
      streamInto(res, zeros.pipe(createGzip({ level: 9 })), written);
    });
    const tracing = tracingTo(`${collector.origin}/v1/traces`, 'http/protobuf', http);
    const before = memory();
    await exportSpans(tracing, 3);
    const grown = memory() - before;

    expect(droppedBy(tracing.dropped())).toEqual({ bad_answer: 3 });
    expect(collector.written.unpacked).toBeLessThan(64 * MIB);
    expect(grown).toBeLessThan(64 * MIB);
  });

  it('answering 200 with a small gzip note: an encoded answer is not taken, however small; the spans are dropped', async () => {
    const collector = await startCollector((res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(gzipSync('{"partialSuccess":{}}'));
    });
    const tracing = tracingTo(`${collector.origin}/v1/traces`, 'http/protobuf', http);
    await exportSpans(tracing, 2);

    expect(collector.seen).toHaveLength(1);
    expect(droppedBy(tracing.dropped())).toEqual({ bad_answer: 2 });
  });

  // Node 20's fetch fails to re-post a protobuf body (its bytes are detached by then); a JSON body, a string, it does.
  it.each(['http/json', 'http/protobuf'])(
    'answering 307 to another origin (%s): the batch is not posted there, nor its api-key; counted as dropped',
    async (protocol) => {
      const other = await startCollector((res) => res.writeHead(200).end());
      const collector = await startCollector((res) =>
        res.writeHead(307, { location: `${other.origin}/v1/traces` }).end(),
      );
      const tracing = tracingTo(`${collector.origin}/v1/traces`, protocol, http);
      await exportSpans(tracing, 4);

      expect(other.seen).toEqual([]);
      expect(collector.seen.map((s) => `${s.method} ${s.url}`)).toEqual(['POST /v1/traces']);
      expect(collector.seen[0]!.headers['api-key']).toBe('collector-secret-4711');
      expect(droppedBy(tracing.dropped())).toEqual({ refused: 4 });
    },
  );

  it('answering 302: no GET follows, and the spans count as dropped, not exported', async () => {
    const collector = await startCollector((res) => {
      res.writeHead(302, { location: '/elsewhere' }).end();
    });
    const tracing = tracingTo(`${collector.origin}/v1/traces`, 'http/protobuf', http);
    await exportSpans(tracing, 2);

    expect(collector.seen.map((s) => `${s.method} ${s.url}`)).toEqual(['POST /v1/traces']);
    expect(droppedBy(tracing.dropped())).toEqual({ refused: 2 });
  });

  it('answering 200 with a short note: the export succeeds, the note read to its end', async () => {
    const collector = await startCollector((res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"partialSuccess":{}}');
    });
    const tracing = tracingTo(`${collector.origin}/v1/traces`, 'http/protobuf', http);
    await exportSpans(tracing, 2);

    expect(collector.seen).toHaveLength(1);
    expect(droppedBy(tracing.dropped())).toEqual({});
  });
});

describe('a hostile collector, through the fetch client', () => {
  it('answering 200 with 16 MiB: the exporter takes no more than its 64 KiB bound and a chunk off the answer', async () => {
    let finished = false;
    const collector = await startCollector((res, written) => {
      res.writeHead(200, { 'content-type': 'application/x-protobuf' });
      res.once('finish', () => (finished = true));
      streamInto(
        res,
        lazily(16 * MIB, () => undefined),
        written,
      );
    });
    // The bytes the exporter pulled off the answer's body, counted as they pass to it.
    let pulled = 0;
    const counting: typeof fetch = async (url, init) => {
      const response = await fetch(url, init);
      const counter = new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          pulled += chunk.byteLength;
          controller.enqueue(chunk);
        },
      });
      return new Response(response.body!.pipeThrough(counter, { signal: init?.signal ?? undefined }), response);
    };
    const tracing = tracingTo(`${collector.origin}/v1/traces`, 'http/protobuf', fetchExportHttp(counting));
    await exportSpans(tracing, 4);

    expect(droppedBy(tracing.dropped())).toEqual({ bad_answer: 4 });
    expect(pulled).toBeLessThan(64 * 1024 + 2 * 64 * 1024);
    expect(pulled).toBeGreaterThan(64 * 1024);
    // The collector never got to the end of its answer: the exporter went away first.
    expect(finished).toBe(false);
    expect(collector.written.bytes).toBeLessThan(16 * MIB);
  });

  it('where a runtime unpacks a gzip bomb anyway, the bound holds over the unpacked bytes', async () => {
    const collector = await startCollector((res, written) => {
      res.writeHead(200, { 'content-encoding': 'gzip' });
      const zeros = lazily(GIB, (bytes) => (written.unpacked += bytes));
      streamInto(res, zeros.pipe(createGzip({ level: 9 })), written);
    });
    // Node's fetch decodes gzip whatever was asked for; reading its decoded stream within the bound stops it.
    const response = await fetch(collector.origin, { headers: { 'accept-encoding': 'identity' } });
    const before = memory();
    expect(await readWithin(response.body as unknown as AsyncIterable<Uint8Array>, 64 * 1024)).toBeNull();
    const grown = memory() - before;
    expect(grown).toBeLessThan(64 * MIB);
    expect(collector.written.unpacked).toBeLessThan(64 * MIB);
  });
});
