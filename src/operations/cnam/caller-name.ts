// The caller name of one search answer for a PBX: the first result's display name, folded to ASCII and cut
// to CNAM_MAX_LENGTH; or why there is none.
import { parsePath, readPath } from '../../upstream/search-client.js';
import { cutToLength, foldToAscii } from './ascii-fold.js';

type CallerName = { name: string } | { none: 'no-listing' | 'no-name' };

export interface CallerNameOptions {
  /** Dotted path of the results array in the upstream's body (UPSTREAM_BODY.resultsPath). */
  resultsPath: string;
  /** Dotted path of the display name inside one result (UPSTREAM_BODY.displayNamePath). */
  displayNamePath: string;
  maxLength: number;
}

export type CallerNameOf = (body: string) => CallerName;

export function createCallerNameOf(options: CallerNameOptions): CallerNameOf {
  const results = parsePath(options.resultsPath);
  const displayName = parsePath(options.displayNamePath);
  return function callerNameOf(body) {
    let value: unknown;
    try {
      value = JSON.parse(body);
    } catch {
      return { none: 'no-listing' };
    }
    const list = readPath(value, results);
    if (!Array.isArray(list) || list.length === 0) return { none: 'no-listing' };
    const raw = readPath(list[0], displayName);
    // A name in a script that does not fold (Han, Arabic, ...) leaves nothing: the fallback is shown instead.
    const name = typeof raw === 'string' ? cutToLength(foldToAscii(raw), options.maxLength) : '';
    return name.length > 0 ? { name } : { none: 'no-name' };
  };
}
