// Misspelled settings are not silently ignored: an environment variable that looks like one of the gateway's
// (one of its prefixes, or a letter or two away from a setting) but is none is named at start, with the closest
// setting. fastest-levenshtein gives the edit distance.
import { closest, distance } from 'fastest-levenshtein';

/** Prefixes too generic to claim: other software sets HTTP_PROXY, DEFAULT_*, REQUEST_* and so on. */
const SHARED_PREFIXES = new Set(['HTTP', 'DEFAULT', 'REQUEST', 'TRUST', 'SHUTDOWN', 'PORT', 'HOST', 'NODE']);

export interface UnknownSetting {
  name: string;
  /** The known setting nearest to it. */
  closest: string;
}

/** The variables of `env` that look like settings but are not among `known`, each with its nearest setting. */
export function unknownSettings(env: Record<string, string | undefined>, known: readonly string[]): UnknownSetting[] {
  const knownSet = new Set(known);
  const prefixes = new Set(
    known.map((name) => name.split('_', 1)[0]!).filter((prefix) => !SHARED_PREFIXES.has(prefix)),
  );
  const found: UnknownSetting[] = [];
  for (const name of Object.keys(env).sort()) {
    if (knownSet.has(name) || !/^[A-Z][A-Z0-9]*_[A-Z0-9_]+$/.test(name)) continue;
    const prefix = name.split('_', 1)[0]!;
    const prefixed = prefixes.has(prefix);
    const near = nearest(name, prefixed ? known.filter((k) => k.startsWith(`${prefix}_`)) : known);
    // A letter or two off a real setting is a typo whatever its prefix (UPSTEAM_TIMEOUT_MS).
    if (prefixed || distance(name, near) <= 2) found.push({ name, closest: near });
  }
  return found;
}

/** A setting the name begins (CACHE_TTL: CACHE_TTL_SECONDS), else the one fewest edits away. */
function nearest(name: string, candidates: readonly string[]): string {
  return candidates.find((k) => k.startsWith(name)) ?? closest(name, candidates as string[]);
}

export function unknownSettingLine(u: UnknownSetting): string {
  return `${u.name} is not a setting of the gateway and is ignored; did you mean ${u.closest}?`;
}
