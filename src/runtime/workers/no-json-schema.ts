// Stands in for `zod/v4/core` in the Worker bundle (wrangler.toml [alias]). hono-openapi's schema converter
// imports all of zod's core on the chance that a route validates with a zod schema; the gateway's OpenAPI document
// is plain JSON Schema and never asks it, and that import alone would be half the bundle.
export function toJSONSchema(): never {
  throw new Error('zod schemas are not converted to JSON Schema on Workers: the OpenAPI document uses JSON Schema');
}
