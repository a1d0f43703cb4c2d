// Reading the upstream's body at configured dotted paths: "no listing" detection here, the console filter too.

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
