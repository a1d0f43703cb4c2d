// W3C Trace Context Level 1 at the edge: which `traceparent` and `tracestate` values are continued, which are
// ignored, and what the gateway writes.
import { describe, expect, it } from 'vitest';
import { formatTraceparent, incomingContext, parseTraceparent, parseTracestate } from './trace-context.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

describe('traceparent', () => {
  it('reads a version-00 header, sampled or not', () => {
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-01`)).toEqual({
      traceId: TRACE,
      spanId: SPAN,
      sampled: true,
      random: false,
    });
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-00`)).toEqual({
      traceId: TRACE,
      spanId: SPAN,
      sampled: false,
      random: false,
    });
    // The sampled bit, and Level 2's random bit; the others are unknown.
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-03`)).toMatchObject({ sampled: true, random: true });
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-02`)).toMatchObject({ sampled: false, random: true });
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-fe`)).toMatchObject({ sampled: false, random: true });
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-fd`)).toMatchObject({ sampled: true, random: false });
    // Optional whitespace around a field value is not part of it (RFC 9110 section 5.5).
    expect(parseTraceparent(` 00-${TRACE}-${SPAN}-01\t`)?.traceId).toBe(TRACE);
  });

  it.each([
    ['absent', undefined],
    ['empty', ''],
    ['upper-case hex', `00-${TRACE.toUpperCase()}-${SPAN}-01`],
    ['all-zero trace id', `00-${'0'.repeat(32)}-${SPAN}-01`],
    ['all-zero parent id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['version ff', `ff-${TRACE}-${SPAN}-01`],
    ['a non-hex version', `0g-${TRACE}-${SPAN}-01`],
    ['version 00 with more after its flags', `00-${TRACE}-${SPAN}-01-extra`],
    ['a short trace id', `00-${TRACE.slice(1)}-${SPAN}-01`],
    ['a wrong separator', `00_${TRACE}-${SPAN}-01`],
    ['non-hex flags', `00-${TRACE}-${SPAN}-0x`],
    ['two headers joined', `00-${TRACE}-${SPAN}-01, 00-${TRACE}-${SPAN}-01`],
    ['a later version with something other than a dash after the flags', `cc-${TRACE}-${SPAN}-01x`],
  ])('ignores %s', (_what, header) => {
    expect(parseTraceparent(header)).toBeUndefined();
  });

  it('reads a later version as far as version 00 goes (section 3.2.4)', () => {
    expect(parseTraceparent(`cc-${TRACE}-${SPAN}-01`)).toEqual({
      traceId: TRACE,
      spanId: SPAN,
      sampled: true,
      random: false,
    });
    expect(parseTraceparent(`cc-${TRACE}-${SPAN}-01-what-the-future-adds`)?.spanId).toBe(SPAN);
  });

  it('writes version 00 with the sampled and random flags, no other', () => {
    const ids = { traceId: TRACE, spanId: SPAN };
    expect(formatTraceparent({ ...ids, sampled: true, random: false })).toBe(`00-${TRACE}-${SPAN}-01`);
    expect(formatTraceparent({ ...ids, sampled: false, random: false })).toBe(`00-${TRACE}-${SPAN}-00`);
    expect(formatTraceparent({ ...ids, sampled: false, random: true })).toBe(`00-${TRACE}-${SPAN}-02`);
    expect(formatTraceparent({ ...ids, sampled: true, random: true })).toBe(`00-${TRACE}-${SPAN}-03`);
  });
});

describe('tracestate', () => {
  it('keeps valid members in order, without optional whitespace or empty members', () => {
    expect(parseTracestate('rojo=00f067aa0ba902b7 , congo=t61rcWkgMzE,, tenant@vendor=x y')).toBe(
      'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE,tenant@vendor=x y',
    );
  });

  it.each([
    ['a key twice', 'a=1,a=2'],
    ['an upper-case key', 'Rojo=1'],
    ['a value with =', 'a=b=c'],
    ['a control character in a value', 'a=b\u0000c'],
    ['a member without =', 'rojo'],
    ['more than 32 members', Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(',')],
    ['nothing but commas', ' , ,'],
  ])('drops the whole header with %s', (_what, header) => {
    expect(parseTracestate(header)).toBeUndefined();
  });

  /** A member `key=vvv…` of exactly `length` characters. */
  const member = (key: string, length: number) => `${key}=${'v'.repeat(length - key.length - 1)}`;

  it('keeps a list of exactly 512 characters whole', () => {
    const list = [member('a', 200), member('b', 200), member('c', 110)].join(',');
    expect(list).toHaveLength(512);
    expect(parseTracestate(list)).toBe(list);
  });

  it('past 512 characters drops the members over 128 first, the last of them first, and only while too long', () => {
    const short = Array.from({ length: 4 }, (_, i) => member(`s${i}`, 100));
    const long = [member('l0', 129), member('l1', 200), member('l2', 129)];
    // 4 x 100 + 129 + 200 + 129 characters and 6 commas: dropping l2 and l1 makes it fit (400 + 129 + 4 = 533 > 512,
    // so l0 goes too).
    expect(parseTracestate([short[0], long[0], short[1], long[1], short[2], long[2], short[3]].join(','))).toBe(
      short.join(','),
    );
    // One long member is enough to drop (the last one over 128): the others stay.
    const fits = [member('a', 129), member('b', 129), member('c', 200), member('d', 100)];
    expect(parseTracestate(fits.join(','))).toBe([fits[0], fits[1], fits[3]].join(','));
  });

  it('then drops members from the end until the list fits', () => {
    const members = Array.from({ length: 32 }, (_, i) => member(`k${String(i).padStart(2, '0')}`, 30));
    // 32 x 30 + 31 = 991 characters; 16 members are 16 x 30 + 15 = 495, 17 would be 526.
    expect(parseTracestate(members.join(','))).toBe(members.slice(0, 16).join(','));
  });

  it('an 8,149-character list of long members keeps what fits in 512 characters: its first two members', () => {
    const members = Array.from({ length: 32 }, (_, i) => member(`k${String(i).padStart(2, '0')}`, i < 31 ? 254 : 244));
    const header = members.join(',');
    expect(header).toHaveLength(8_149);
    expect(parseTracestate(header)).toBe(members.slice(0, 2).join(','));
    expect(incomingContext(`00-${TRACE}-${SPAN}-01`, header)?.traceState).toHaveLength(509);
  });

  it('is not read when traceparent is invalid, and kept with a valid one', () => {
    expect(incomingContext('00-bad', 'rojo=1')).toBeUndefined();
    expect(incomingContext(`00-${TRACE}-${SPAN}-01`, 'rojo=1')).toEqual({
      traceId: TRACE,
      spanId: SPAN,
      sampled: true,
      random: false,
      traceState: 'rojo=1',
    });
    expect(incomingContext(`00-${TRACE}-${SPAN}-01`, undefined)?.traceState).toBeUndefined();
  });
});
