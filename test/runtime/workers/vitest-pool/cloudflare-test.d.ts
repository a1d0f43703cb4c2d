// The helpers of @cloudflare/vitest-pool-workers' `cloudflare:test` module these tests use, typed against the
// project's own narrow Workers types (the package's typings need the full @cloudflare/workers-types globals).
declare module 'cloudflare:test' {
  import type { DurableObjectState, ExecutionContext } from '../../../../src/runtime/workers/bindings.js';
  export function createExecutionContext(): ExecutionContext;
  export function waitOnExecutionContext(ctx: ExecutionContext): Promise<void>;
  export function runInDurableObject<R>(
    stub: unknown,
    callback: (instance: unknown, state: DurableObjectState) => R | Promise<R>,
  ): Promise<R>;
  export function runDurableObjectAlarm(stub: unknown): Promise<boolean>;
  export function abortAllDurableObjects(): Promise<void>;
  export function reset(): Promise<void>;
}
