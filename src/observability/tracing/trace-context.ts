// W3C Trace Context Level 1: the `traceparent` and `tracestate` header fields read from a caller and written to an
// upstream. An invalid `traceparent` is ignored (and its `tracestate` with it), as the Recommendation says. Of Level 2,
// the random flag (`02`): kept from a caller, set on every trace the gateway starts (its trace ids are all random).

/** Where a span sits in a trace: the ids a `traceparent` carries, whether it is sampled, the caller's tracestate. */
export interface SpanContext {
  /** 32 lowercase hex digits, not all zero. */
  readonly traceId: string;
  /** 16 lowercase hex digits, not all zero. */
  readonly spanId: string;
  readonly sampled: boolean;
  /** Trace Context Level 2's random flag: the trace id's rightmost 56 bits are random. */
  readonly random: boolean;
  /** The caller's `tracestate`, normalised; passed on unchanged (the gateway adds no entry of its own). */
  readonly traceState: string | undefined;
}

const HEX_ONLY = /^[0-9a-f]+$/;
const ALL_ZERO = /^0+$/;
// Trace Context section 3.2.2: a version-00 header is exactly 55 characters; a later version's starts like one.
const V00_LENGTH = 55;

const isId = (value: string, length: number) =>
  value.length === length && HEX_ONLY.test(value) && !ALL_ZERO.test(value);

/**
 * The caller's `traceparent` (section 3.2), or undefined when it is absent or invalid: a bad length or character,
 * version `ff`, an all-zero id, or a version-00 header with anything after its flags. A version above 00 is read
 * as far as version 00 defines and the rest ignored, as section 3.2.4 asks.
 */
export function parseTraceparent(header: string | null | undefined): Omit<SpanContext, 'traceState'> | undefined {
  if (header === null || header === undefined) return undefined;
  const value = header.trim();
  if (value.length < V00_LENGTH) return undefined;
  const version = value.slice(0, 2);
  if (!/^[0-9a-f]{2}$/.test(version) || version === 'ff') return undefined;
  if (version === '00' ? value.length !== V00_LENGTH : value.length > V00_LENGTH && value[V00_LENGTH] !== '-')
    return undefined;
  if (value[2] !== '-' || value[35] !== '-' || value[52] !== '-') return undefined;
  const traceId = value.slice(3, 35);
  const spanId = value.slice(36, 52);
  const flags = value.slice(53, 55);
  if (!isId(traceId, 32) || !isId(spanId, 16) || !HEX_ONLY.test(flags)) return undefined;
  const bits = parseInt(flags, 16);
  return { traceId, spanId, sampled: (bits & 1) === 1, random: (bits & 2) === 2 };
}

const FLAGS = ['00', '01', '02', '03'];

/** The `traceparent` to send on: version 00, the flags the gateway knows (sampled, random) and no other. */
export function formatTraceparent(context: Pick<SpanContext, 'traceId' | 'spanId' | 'sampled' | 'random'>): string {
  return `00-${context.traceId}-${context.spanId}-${FLAGS[(context.sampled ? 1 : 0) + (context.random ? 2 : 0)]}`;
}

// Section 3.3.1.3: a key is simple (lcalpha first) or multi-tenant (tenant@system); a value is printable ASCII
// without `,` and `=`, not ending in a space.
const KEY = /^(?:[a-z][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13})$/;
const VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;
const MAX_MEMBERS = 32;
// Section 3.3.1.5: a vendor propagates at least 512 characters of the list (commas counted); the gateway keeps that
// much and no more, on its spans and towards the upstream.
const MAX_LENGTH = 512;
const LONG_MEMBER = 128;

const listLength = (members: readonly string[]) => members.reduce((n, m) => n + m.length, 0) + members.length - 1;

/** Whole members dropped until the list fits, as section 3.3.1.5 asks: those over 128 characters first, then from the end. */
function truncated(members: readonly string[]): string[] {
  let kept = [...members];
  for (let i = kept.length - 1; i >= 0 && listLength(kept) > MAX_LENGTH; i--)
    if (kept[i]!.length > LONG_MEMBER) kept.splice(i, 1);
  while (kept.length > 0 && listLength(kept) > MAX_LENGTH) kept = kept.slice(0, -1);
  return kept;
}

/**
 * The caller's `tracestate` (section 3.3) with optional whitespace and empty members dropped, or undefined when it
 * is absent, empty or invalid (a bad member, a key twice, more than 32 members): then it is not passed on at all.
 * A list over 512 characters loses whole members until it fits (section 3.3.1.5).
 */
export function parseTracestate(header: string | null | undefined): string | undefined {
  if (header === null || header === undefined) return undefined;
  const members: string[] = [];
  const keys = new Set<string>();
  for (const raw of header.split(',')) {
    const member = raw.trim();
    if (member === '') continue;
    const eq = member.indexOf('=');
    const key = member.slice(0, eq);
    if (eq < 1 || !KEY.test(key) || !VALUE.test(member.slice(eq + 1)) || keys.has(key)) return undefined;
    keys.add(key);
    members.push(member);
  }
  if (members.length === 0 || members.length > MAX_MEMBERS) return undefined;
  const list = members.join(',');
  if (list.length <= MAX_LENGTH) return list;
  const kept = truncated(members);
  return kept.length === 0 ? undefined : kept.join(',');
}

/** The caller's span context from its two header fields, or undefined when `traceparent` is absent or invalid. */
export function incomingContext(
  traceparent: string | null | undefined,
  tracestate: string | null | undefined,
): SpanContext | undefined {
  const parent = parseTraceparent(traceparent);
  if (parent === undefined) return undefined;
  // Built field by field: an object spread here cost more than the parse itself.
  return {
    traceId: parent.traceId,
    spanId: parent.spanId,
    sampled: parent.sampled,
    random: parent.random,
    traceState: parseTracestate(tracestate),
  };
}
