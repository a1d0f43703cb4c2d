// The one reader of the `what` query parameter, for the app's routes and the Node hit path alike. It reads a
// query string as Hono's `query()` does (names and values decoded, `+` as a space, a malformed escape left as it
// is) and also counts every spelling of the name (`what`, `WHAT`, `wh%61t`, a bare `what` without `=`): more than
// one is ambiguous, because another component could read either value.
import { tryDecodeURIComponent } from 'hono/utils/url';

export interface WhatParam {
  /** How many names spell `what` in any case or encoding. */
  count: number;
  /** The value of the first name that decodes to exactly `what` ('' for a bare name); undefined when none does. */
  value: string | undefined;
}

const decode = (text: string): string => tryDecodeURIComponent(text.includes('+') ? text.replaceAll('+', ' ') : text);

/** Reads `query` (the part after `?`; anything from `#` on is ignored). */
export function whatParam(query: string): WhatParam {
  const hash = query.indexOf('#');
  let count = 0;
  let value: string | undefined;
  for (const pair of (hash === -1 ? query : query.slice(0, hash)).split('&')) {
    const eq = pair.indexOf('=');
    const raw = eq === -1 ? pair : pair.slice(0, eq);
    // `what` takes four characters in any spelling; an encoded one takes more.
    if (raw.length < 4) continue;
    const name = raw.includes('%') || raw.includes('+') ? decode(raw) : raw;
    if (name.length !== 4 || name.toLowerCase() !== 'what') continue;
    count++;
    if (name === 'what' && value === undefined) value = eq === -1 ? '' : decode(pair.slice(eq + 1));
  }
  return { count, value };
}
