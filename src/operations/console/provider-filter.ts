// Keeps only the console's provider in an upstream search body; where results and provider live is configurable.
import { GatewayError } from '../../base/errors.js';
import { parsePath, readPath } from '../../upstream/search-client.js';

export interface ProviderFilterOptions {
  /** The provider's id or its name, in any case (people write `SwissDir` for the id `swissdir`). */
  provider: string;
  /** Dot paths into the body (results, total) and into one result (provider id and name). */
  resultsPath: string;
  providerPath: string;
  totalPath: string;
  providerNamePath: string;
}

export interface FilteredBody {
  body: string;
  kept: number;
  removed: number;
  /** Ids of the providers whose results were removed, each once (at most 10), for a misconfiguration warning. */
  otherProviders: string[];
}

const MAX_NAMED = 10;

/**
 * Removes every result of another provider and sets the total to what is left. A body whose shape is
 * not the configured one is refused (502) rather than passed through: it could not be filtered.
 */
export function filterToProvider(text: string, options: ProviderFilterOptions): FilteredBody {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new GatewayError('upstream_error', 'The directory service answered in an unexpected format.', { cause: err });
  }
  const resultsPath = parsePath(options.resultsPath);
  const providerPath = parsePath(options.providerPath);
  const results = readPath(body, resultsPath);
  if (!Array.isArray(results)) {
    throw new GatewayError('upstream_error', 'The directory service answered in an unexpected format.');
  }
  const wanted = options.provider.toLowerCase();
  const namePath = parsePath(options.providerNamePath);
  const matches = (value: unknown) => typeof value === 'string' && value.toLowerCase() === wanted;
  const kept: unknown[] = [];
  const otherProviders: string[] = [];
  for (const entry of results) {
    const id = readPath(entry, providerPath);
    if (matches(id) || matches(readPath(entry, namePath))) kept.push(entry);
    else if (typeof id === 'string' && otherProviders.length < MAX_NAMED && !otherProviders.includes(id))
      otherProviders.push(id);
  }

  const parentOf = (path: string[]) => readPath(body, path.slice(0, -1)) as Record<string, unknown>;
  parentOf(resultsPath)[resultsPath.at(-1)!] = kept;
  const totalPath = parsePath(options.totalPath);
  const totalParent = readPath(body, totalPath.slice(0, -1));
  if (
    totalParent !== null &&
    typeof totalParent === 'object' &&
    typeof (totalParent as Record<string, unknown>)[totalPath.at(-1)!] === 'number'
  ) {
    (totalParent as Record<string, unknown>)[totalPath.at(-1)!] = kept.length;
  }
  return { body: JSON.stringify(body), kept: kept.length, removed: results.length - kept.length, otherProviders };
}
