import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { createNumberNormalizer } from '../../src/phone/normalize.js';

const gb = createNumberNormalizer({ defaultRegion: 'GB' });
const au = createNumberNormalizer({ defaultRegion: 'AU' });
const none = createNumberNormalizer({ defaultRegion: undefined });

function invalid(normalizer: typeof gb, raw: string | undefined) {
  try {
    normalizer.normalize(raw);
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).code).toBe('invalid_number');
    expect((err as GatewayError).status).toBe(400);
    return true;
  }
  return false;
}

describe('number normalisation', () => {
  it('turns every usual spelling of one number into the same E.164', () => {
    const spellings = [
      '+44 20 7946 0101',
      '+442079460101',
      '0044 20 7946 0101',
      '020 7946 0101',
      '020-7946-0101',
      '(020) 7946 0101',
      ' 02079460101 ',
    ];
    for (const s of spellings) expect(gb.normalize(s), s).toBe('+442079460101');
  });

  it('reads national numbers in the configured default region', () => {
    expect(au.normalize('(02) 5550 1234')).toBe('+61255501234');
    expect(au.normalize('0011 44 20 7946 0101')).toBe('+442079460101');
    expect(gb.normalize('07700 900123')).toBe('+447700900123');
  });

  it('accepts 00 as the international prefix even without a default region', () => {
    expect(none.normalize('0044 20 7946 0101')).toBe('+442079460101');
    expect(none.normalize('+61 2 5550 1234')).toBe('+61255501234');
  });

  it('refuses national numbers when no default region is configured', () => {
    expect(invalid(none, '020 7946 0101')).toBe(true);
  });

  it.each([
    ['empty', ''],
    ['blank', '   '],
    ['letters', 'abc'],
    ['vanity letters', '0800 FLOWERS'],
    ['a lone plus', '+'],
    ['too short', '12'],
    ['too long', '+44 20 7946 0101 0101 0101 0101 0101 0101'],
    ['control characters', '020 7946\u0000 0101'],
    ['a newline', '020 7946\n0101'],
    ['too many digits for the region', '+44 20 7946 01011111'],
    ['an unknown country code', '+999 123 456'],
    ['two pluses', '++44 20 7946 0101'],
    ['a URL', 'http://example.com'],
  ])('refuses %s with invalid_number (400)', (_name, raw) => {
    expect(invalid(gb, raw)).toBe(true);
  });

  it('refuses a missing value as a bad request (400), not as an impossible number', () => {
    const err = (() => {
      try {
        gb.normalize(undefined);
      } catch (e) {
        return e as GatewayError;
      }
      throw new Error('expected a GatewayError');
    })();
    expect(err).toBeInstanceOf(GatewayError);
    expect(err.code).toBe('bad_request');
    expect(err.message).toBe('The query parameter "what" is required.');
  });

  it('gives the same answer for a spelling it has seen before (memoised)', () => {
    const n = createNumberNormalizer({ defaultRegion: 'GB', memoEntries: 2 });
    expect(n.normalize('020 7946 0101')).toBe('+442079460101');
    expect(n.normalize('020 7946 0101')).toBe('+442079460101');
    expect(invalid(n, 'abc')).toBe(true);
    expect(invalid(n, 'abc')).toBe(true);
  });
});
