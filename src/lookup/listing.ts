// "No listing" detection: whether the upstream's body holds a non-empty results array at a configured path.

/** Splits a dotted path once, at configuration time. */
export function parsePath(path: string): string[] {
  return path.split('.').filter(Boolean);
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
  for (const step of steps) {
    if (typeof value !== 'object' || value === null) return false;
    value = (value as Record<string, unknown>)[step];
  }
  return Array.isArray(value) && value.length > 0;
}
