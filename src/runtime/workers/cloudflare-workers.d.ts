// The few Workers runtime types the Workers adapters use (the full @cloudflare/workers-types clash with the DOM
// lib the core compiles against); shapes as documented by Cloudflare, narrowed to what is called.

declare module 'cloudflare:workers' {
  /** Base class of a Durable Object with RPC methods. */
  export abstract class DurableObject<Env = unknown> {
    protected readonly ctx: import('./bindings.js').DurableObjectState;
    protected readonly env: Env;
    constructor(ctx: import('./bindings.js').DurableObjectState, env: Env);
  }
  /** Extends the current request's lifetime until `promise` settles (the request in whose context it is called). */
  export function waitUntil(promise: Promise<unknown>): void;
  /** The Worker's bindings, importable outside a handler (the tests in workerd use it). */
  export const env: Record<string, unknown>;
}
