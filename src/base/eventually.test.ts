import { describe, expect, it } from 'vitest';
import { whenSettled } from './eventually.js';

describe('whenSettled', () => {
  it('goes on with a value that is there at once, without a promise', () => {
    const next = whenSettled(2, (n) => n * 10);
    expect(next).toBe(20);
  });

  it('goes on with a promised value once it settles, and hands a rejection to fail', async () => {
    const later = whenSettled(Promise.resolve(2), (n) => n * 10);
    expect(later).toBeInstanceOf(Promise);
    expect(await later).toBe(20);
    const failed = whenSettled(
      Promise.reject(new Error('no')),
      () => 'went on',
      (err) => `failed: ${(err as Error).message}`,
    );
    expect(await failed).toBe('failed: no');
  });
});
