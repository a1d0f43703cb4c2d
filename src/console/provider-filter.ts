// Keeps only the console's provider in an upstream search body; where results and provider live is configurable.
import { GatewayError } from '../errors.js';

export interface ProviderFilterOptions {
  provider: string;
  /** Dot paths into the body (results, total) and into one result (provider id). */
  resultsPath: string;
  providerPath: string;
  totalPath: string;
}

export interface FilteredBody {
  body: string;
  kept: number;
  removed: number;
}

const read = (value: unknown, path: string[]): unknown =>
  path.reduce<unknown>((node, key) => (node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined), value);

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
  const resultsPath = options.resultsPath.split('.');
  const providerPath = options.providerPath.split('.');
  const results = read(body, resultsPath);
  if (!Array.isArray(results)) {
    throw new GatewayError('upstream_error', 'The directory service answered in an unexpected format.');
  }
  const kept = results.filter((entry) => read(entry, providerPath) === options.provider);

  const parentOf = (path: string[]) => read(body, path.slice(0, -1)) as Record<string, unknown>;
  parentOf(resultsPath)[resultsPath.at(-1)!] = kept;
  const totalPath = options.totalPath.split('.');
  const totalParent = read(body, totalPath.slice(0, -1));
  if (totalParent !== null && typeof totalParent === 'object' && typeof (totalParent as Record<string, unknown>)[totalPath.at(-1)!] === 'number') {
    (totalParent as Record<string, unknown>)[totalPath.at(-1)!] = kept.length;
  }
  return { body: JSON.stringify(body), kept: kept.length, removed: results.length - kept.length };
}
