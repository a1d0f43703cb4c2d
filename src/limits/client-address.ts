// The client address the console's limits count against: the peer, or X-Forwarded-For behind trusted proxies.

/**
 * With `trustedHops` = 0 the peer address is the client and X-Forwarded-For is ignored (anyone can send it).
 * With N trusted proxies in front, each appends the address it saw, so the client is the Nth entry from
 * the right; entries further left were written by the client itself and are never believed.
 */
export function clientAddress(
  peer: string | undefined,
  forwardedFor: string | undefined,
  trustedHops: number,
): string | undefined {
  const entry = trustedForwardedEntry(forwardedFor, trustedHops);
  if (entry !== undefined) return canonicalAddress(entry);
  return peer === undefined ? undefined : canonicalAddress(peer);
}

/**
 * The entry of a comma-separated X-Forwarded-* field that the outermost of `trustedHops` proxies wrote: the Nth
 * from the right (each proxy appends); entries further left were written by the client and are never believed.
 * Undefined with no trusted proxy or no entry.
 */
export function trustedForwardedEntry(field: string | undefined, trustedHops: number): string | undefined {
  if (trustedHops === 0 || !field) return undefined;
  const hops = field
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  // Fewer entries than trusted proxies: the leftmost one is the furthest any trusted hop saw.
  return hops.length > 0 ? hops[Math.max(0, hops.length - trustedHops)] : undefined;
}

/**
 * One key per client: IPv4-mapped IPv6 becomes IPv4, and an IPv6 address counts by its /64, the block
 * one subscriber usually holds (otherwise rotating through it would give a fresh limit per request).
 */
export function canonicalAddress(raw: string): string {
  let text = raw.trim();
  // X-Forwarded-For sometimes carries "[v6]:port" or "v4:port".
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(text);
  if (bracketed) text = bracketed[1]!;
  else if (/^\d{1,3}(\.\d{1,3}){3}:\d+$/.test(text)) text = text.slice(0, text.lastIndexOf(':'));
  const mapped = /^::ffff:(\d{1,3}(\.\d{1,3}){3})$/i.exec(text);
  if (mapped) return mapped[1]!;
  if (!text.includes(':')) return text.toLowerCase();
  const groups = expandIpv6(text.replace(/%.*$/, ''));
  return groups ? `${groups.slice(0, 4).join(':')}::/64` : text.toLowerCase();
}

function expandIpv6(text: string): string[] | undefined {
  const halves = text.toLowerCase().split('::');
  if (halves.length > 2) return undefined;
  const parse = (part: string) => (part === '' ? [] : part.split(':'));
  const head = parse(halves[0]!);
  const tail = halves.length === 2 ? parse(halves[1]!) : [];
  if (tail.some((g) => g.includes('.')) || head.some((g) => g.includes('.'))) return undefined;
  const missing = 8 - head.length - tail.length;
  if (missing < 0 || (halves.length === 1 && missing !== 0)) return undefined;
  const groups = [...head, ...Array<string>(missing).fill('0'), ...tail];
  if (!groups.every((g) => /^[0-9a-f]{1,4}$/.test(g))) return undefined;
  return groups.map((g) => g.replace(/^0+(?=.)/, ''));
}
