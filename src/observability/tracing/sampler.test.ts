// The OTEL_TRACES_SAMPLER samplers: which traces they record, and that the parent-based ones follow the caller.
import { describe, expect, it } from 'vitest';
import { callerSampleBudget, recordsEveryTrace, samplerOf, traceIdInRatio } from './sampler.js';
import { RandomIds } from './trace-ids.js';

describe('samplers', () => {
  const random = new RandomIds();
  const ids = Array.from({ length: 20_000 }, () => random.traceId());

  it('traceidratio records about its share of random trace ids, the same way every time', () => {
    const share = ids.filter((id) => traceIdInRatio(id, 0.25)).length / ids.length;
    expect(share).toBeGreaterThan(0.23);
    expect(share).toBeLessThan(0.27);
    expect(ids.filter((id) => traceIdInRatio(id, 0.25))).toEqual(ids.filter((id) => traceIdInRatio(id, 0.25)));
    // A trace recorded at a ratio is recorded at every larger one (one threshold on the id's random part).
    expect(ids.filter((id) => traceIdInRatio(id, 0.25) && !traceIdInRatio(id, 0.5))).toEqual([]);
    expect(ids.every((id) => traceIdInRatio(id, 1))).toBe(true);
    expect(ids.some((id) => traceIdInRatio(id, 0))).toBe(false);
  });

  it('reads only the rightmost 56 bits (the random part of a W3C trace id)', () => {
    expect(traceIdInRatio('ffffffffffffffffff00000000000000', 0.5)).toBe(false);
    expect(traceIdInRatio('000000000000000000ffffffffffffff', 0.5)).toBe(true);
  });

  it('compares the random part with its threshold exactly: at 0.5, 2^55 and above are recorded; at 2^-20, 2^56 - 2^36', () => {
    expect(traceIdInRatio('00000000000000000080000000000000', 0.5)).toBe(true);
    expect(traceIdInRatio('0000000000000000007fffffffffffff', 0.5)).toBe(false);
    // At 2^-20 the threshold is 2^56 - 2^36: hex fffff000000000.
    expect(traceIdInRatio('ffffffffffffffffffffffefffffffff', 2 ** -20)).toBe(false);
    expect(traceIdInRatio('000000000000000000fffff000000000', 2 ** -20)).toBe(true);
  });

  it('the parent-based samplers follow the caller, and decide alone for a new trace', () => {
    const id = ids.find((i) => !traceIdInRatio(i, 0.5))!;
    const ratio = (name: 'parentbased_traceidratio' | 'traceidratio') => ({ name, ratio: 0.5 });
    expect(samplerOf(ratio('parentbased_traceidratio'))(id, true)).toBe(true);
    expect(samplerOf(ratio('parentbased_traceidratio'))(id, undefined)).toBe(false);
    expect(samplerOf(ratio('traceidratio'))(id, true)).toBe(false);
    expect(samplerOf({ name: 'parentbased_always_on', ratio: 1 })(id, false)).toBe(false);
    expect(samplerOf({ name: 'parentbased_always_on', ratio: 1 })(id, undefined)).toBe(true);
    expect(samplerOf({ name: 'parentbased_always_off', ratio: 1 })(id, true)).toBe(true);
    expect(samplerOf({ name: 'parentbased_always_off', ratio: 1 })(id, undefined)).toBe(false);
    expect(samplerOf({ name: 'always_on', ratio: 1 })(id, false)).toBe(true);
    expect(samplerOf({ name: 'always_off', ratio: 1 })(id, true)).toBe(false);
  });
});

describe("the callers' budget", () => {
  it('gives its rate a second, at most one second’s worth at once, refilled by the clock it is given', () => {
    const budget = callerSampleBudget(3);
    expect([0, 0, 0, 0].map((t) => budget.take(t))).toEqual([true, true, true, false]);
    expect(budget.take(333)).toBe(false);
    expect(budget.take(334)).toBe(true);
    expect(budget.capped).toBe(2);
    // Ten idle seconds refill three traces, not thirty.
    expect([10_334, 10_334, 10_334, 10_334].map((t) => budget.take(t))).toEqual([true, true, true, false]);
    expect(budget.capped).toBe(3);
  });

  it('at 0 never gives one, and a clock that steps back refills nothing', () => {
    const none = callerSampleBudget(0);
    expect(none.take(0)).toBe(false);
    expect(none.take(60_000)).toBe(false);
    const one = callerSampleBudget(1);
    expect(one.take(5_000)).toBe(true);
    expect(one.take(1_000)).toBe(false);
  });

  it('is needed only by samplers that do not record every trace anyway', () => {
    expect(recordsEveryTrace({ name: 'parentbased_always_on', ratio: 1 })).toBe(true);
    expect(recordsEveryTrace({ name: 'always_on', ratio: 1 })).toBe(true);
    expect(recordsEveryTrace({ name: 'parentbased_traceidratio', ratio: 1 })).toBe(true);
    expect(recordsEveryTrace({ name: 'parentbased_traceidratio', ratio: 0.99 })).toBe(false);
    expect(recordsEveryTrace({ name: 'parentbased_always_off', ratio: 1 })).toBe(false);
  });
});
