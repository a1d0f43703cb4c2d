// The circuit breaker on a fake clock: opens after N consecutive failures, admits one trial after the open
// period, closes on its success and opens again on its failure.
import { describe, expect, it } from 'vitest';
import { createCircuitBreaker, type BreakerTicket } from './pauses.js';

function setup(failures = 3, openMs = 10_000) {
  const time = { now: 1_000_000 };
  let opens = 0;
  const breaker = createCircuitBreaker({ failures, openMs, clock: () => time.now, onOpen: () => opens++ });
  const admit = (): BreakerTicket => {
    const t = breaker.admit();
    if (typeof t === 'number') throw new Error(`refused for ${t} ms`);
    return t;
  };
  return { time, breaker, admit, opens: () => opens };
}

describe('circuit breaker', () => {
  it('opens after the configured consecutive failures and refuses until the open period ends', () => {
    const { time, breaker, admit, opens } = setup(3, 10_000);
    admit().failure();
    admit().failure();
    expect(breaker.snapshot()).toMatchObject({ state: 'closed', consecutiveFailures: 2 });
    admit().failure();
    expect(opens()).toBe(1);
    expect(breaker.snapshot()).toMatchObject({ state: 'open', retryInMs: 10_000 });
    expect(breaker.admit()).toBe(10_000);
    time.now += 4_000;
    expect(breaker.admit()).toBe(6_000);
    expect(breaker.blockedForMs()).toBe(6_000);
  });

  it('a success in between starts the count again', () => {
    const { breaker, admit } = setup(3);
    admit().failure();
    admit().failure();
    admit().success();
    admit().failure();
    admit().failure();
    expect(breaker.snapshot().state).toBe('closed');
  });

  it('admits exactly one trial after the open period; its success closes the breaker', () => {
    const { time, breaker, admit } = setup(1, 5_000);
    admit().failure();
    time.now += 5_000;
    expect(breaker.snapshot().state).toBe('half_open');
    const trial = admit();
    // Everyone else waits while the trial runs.
    expect(typeof breaker.admit()).toBe('number');
    expect(typeof breaker.admit()).toBe('number');
    trial.success();
    expect(breaker.snapshot()).toMatchObject({ state: 'closed', consecutiveFailures: 0, retryInMs: 0 });
    admit().success();
  });

  it('a failed trial opens it again for the whole period', () => {
    const { time, breaker, admit, opens } = setup(2, 5_000);
    admit().failure();
    admit().failure();
    time.now += 5_000;
    admit().failure();
    expect(opens()).toBe(2);
    expect(breaker.snapshot()).toMatchObject({ state: 'open', retryInMs: 5_000 });
  });

  it('a neutral trial (a 429) gives the trial back without deciding', () => {
    const { time, breaker, admit } = setup(1, 5_000);
    admit().failure();
    time.now += 5_000;
    admit().neutral();
    expect(breaker.snapshot().state).toBe('half_open');
    admit().success();
    expect(breaker.snapshot().state).toBe('closed');
  });

  it('ends a ticket once: a second end changes nothing', () => {
    const { breaker, admit } = setup(2);
    const t = admit();
    t.failure();
    t.failure();
    expect(breaker.snapshot()).toMatchObject({ state: 'closed', consecutiveFailures: 1 });
  });
});
