// Reading the upstream's body at dotted paths: where the gateway finds what it reads there, "no listing"
// detection here, the console filter too.

/**
 * The places in the upstream's search JSON the gateway reads; the rest passes through untouched. The spec does not
 * show the body: these follow the built-in simulator's schema. The upstream is one fixed service, so its body's
 * shape is one fact for every deployment, kept here rather than in each deployment's settings.
 */
export const UPSTREAM_BODY = {
  /** The results array (absent or empty: "no listing"). */
  resultsPath: 'results',
  /** A result's directory provider id (the console filter). */
  providerPath: 'provider.id',
  /** The result count, adjusted by the console filter. */
  totalPath: 'total',
  /** A result's provider name (CONSOLE_PROVIDER may give it instead of the id). */
  providerNamePath: 'provider.name',
  /** A result's display name (the CNAM route's caller name). */
  displayNamePath: 'displayName',
} as const;

/** Splits a dotted path once, at configuration time. */
export function parsePath(path: string): string[] {
  return path.split('.').filter(Boolean);
}

/** The value at `steps` inside `value`, or undefined where the path leaves the objects. */
export function readPath(value: unknown, steps: readonly string[]): unknown {
  let node = value;
  for (const step of steps) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[step];
  }
  return node;
}

/** True when the value at `path` in the JSON `body` is a non-empty array; false for anything else. */
export function hasListing(body: string, path: string | readonly string[]): boolean {
  const steps = typeof path === 'string' ? parsePath(path) : path;
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return false;
  }
  const results = readPath(value, steps);
  return Array.isArray(results) && results.length > 0;
}
