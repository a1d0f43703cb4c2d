// Spans on their way to the collector: a bounded queue, sent in batches after a delay (or as soon as a batch is
// full) by one export loop at a time, off every answer's path. What does not fit, or fails to send, is counted.
import { DROP_CAUSES, type DropCause } from './export-retry.js';
import type { OtlpExporter } from './otlp-http.js';
import type { FinishedSpan, SpanSink } from './span.js';

export interface BatchOptions {
  /** How long the first span of a batch waits for others (OTEL_BSP_SCHEDULE_DELAY). */
  readonly scheduleDelayMs: number;
  /** Spans waiting at most; more are dropped and counted (OTEL_BSP_MAX_QUEUE_SIZE). */
  readonly maxQueueSize: number;
  /** Spans per export request at most (OTEL_BSP_MAX_EXPORT_BATCH_SIZE). */
  readonly maxExportBatchSize: number;
}

/** Spans dropped so far, by why. */
export type DroppedSpans = Readonly<Record<DropCause, number>>;

export interface BatcherRuntime {
  /**
   * Keeps the export loop alive past the answer: in process on Node, `ctx.waitUntil` on Workers (the runtime's
   * RunInBackground, which shared-state/ declares; observability/ sits below it and takes it by its shape).
   */
  readonly background: (work: Promise<unknown>) => void;
  /** Resolves after `ms`; on Node a timer that keeps no process alive. */
  readonly sleep: (ms: number) => Promise<void>;
  /** Milliseconds since the epoch, the spans' clock. */
  readonly now: () => number;
}

/** The sink a tracer ends its spans into; the runtime and the metrics read it. */
export class SpanBatcher implements SpanSink {
  /** The exporter's: a span is written in the export's encoding as it ends (otlp-protobuf.ts says why). */
  private readonly queue: OtlpExporter['queue'];
  private readonly droppedSpans = Object.fromEntries(DROP_CAUSES.map((c) => [c, 0])) as Record<DropCause, number>;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  /** While a flush waits: the loop sends what is queued without waiting for a batch to fill. */
  private draining = false;

  constructor(
    private readonly exporter: OtlpExporter,
    private readonly options: BatchOptions,
    private readonly runtime: BatcherRuntime,
  ) {
    this.queue = exporter.queue;
  }

  now(): number {
    return this.runtime.now();
  }

  /** Queues an ended span; never waits. A full queue drops it and counts it. */
  end(span: FinishedSpan): void {
    if (this.queue.length >= this.options.maxQueueSize) {
      this.droppedSpans.queue_full++;
      return;
    }
    this.queue.push(span);
    if (this.queue.length >= this.options.maxExportBatchSize) this.wake?.();
    if (this.loop === undefined) this.runtime.background(this.startLoop(this.options.scheduleDelayMs));
  }

  /** Sends every queued span now; resolves when the export loop is idle (shutdown, tests). */
  flush(): Promise<void> {
    this.draining = true;
    this.wake?.();
    return (this.loop ?? this.startLoop(0)).finally(() => {
      this.draining = false;
    });
  }

  /** Spans lost so far, by cause: the queue was full, or their export failed (export-retry.ts). */
  dropped(): DroppedSpans {
    return this.droppedSpans;
  }

  private startLoop(delayMs: number): Promise<void> {
    this.loop = this.exportAll(delayMs).finally(() => {
      this.loop = undefined;
      this.wake = undefined;
    });
    return this.loop;
  }

  private async exportAll(delayMs: number): Promise<void> {
    let delay = delayMs;
    while (this.queue.length > 0) {
      // A part batch waits for more, also after a send: a steady stream goes in full batches, not in one export
      // request per send's round trip. A flush waits for nothing.
      if (this.queue.length < this.options.maxExportBatchSize && !this.draining) {
        await Promise.race([this.runtime.sleep(delay), new Promise<void>((resolve) => (this.wake = resolve))]);
        this.wake = undefined;
      }
      delay = this.options.scheduleDelayMs;
      const spans = Math.min(this.queue.length, this.options.maxExportBatchSize);
      const cause = await this.exporter.send(this.queue.take(this.options.maxExportBatchSize));
      if (cause !== undefined) this.droppedSpans[cause] += spans;
    }
  }
}
