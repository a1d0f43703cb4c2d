import { describe, expect, it } from 'vitest';
import { GatewayError } from '../base/errors.js';
import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/min';
import metadata from 'libphonenumber-js/metadata.min.json';
import { createNumberNormalizer, MAIN_COUNTRY_METADATA, SHARED_CALLING_CODES } from './normalize.js';

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

  it('refuses an empty value (`what=`) as a missing one: a bad request (400)', () => {
    expect(() => gb.normalize('')).toThrow(expect.objectContaining({ code: 'bad_request', status: 400 }));
    expect(() => gb.normalize('')).toThrow('The value of "what" is empty.');
  });

  it('gives the same answer for a spelling it has seen before (memoised)', () => {
    const n = createNumberNormalizer({ defaultRegion: 'GB', memoEntries: 2 });
    expect(n.normalize('020 7946 0101')).toBe('+442079460101');
    expect(n.normalize('020 7946 0101')).toBe('+442079460101');
    expect(invalid(n, 'abc')).toBe(true);
    expect(invalid(n, 'abc')).toBe(true);
  });
});

describe('parsing with the main country of each calling code', () => {
  // A seeded generator: the same numbers on every run, spread over every calling code and length.
  function digitsFrom(seed: number): (count: number) => string {
    let state = seed >>> 0;
    return (count) => {
      let out = '';
      for (let i = 0; i < count; i++) {
        state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
        out += String(state % 10);
      }
      return out;
    };
  }

  /** What libphonenumber answers with every country of every calling code: the normaliser's reference. */
  const reference = (input: string, region: CountryCode | undefined): string | undefined => {
    const parsed = parsePhoneNumberFromString(input, { defaultCountry: region, extract: false });
    return parsed?.isPossible() ? parsed.number : undefined;
  };
  const answer = (normalizer: typeof gb, input: string): string | undefined => {
    try {
      return normalizer.normalize(input);
    } catch {
      return undefined;
    }
  };

  it('names the lengths the countries of +1 and +44 disagree on', () => {
    expect([...(SHARED_CALLING_CODES.get('1')?.disputedLengths ?? [])]).toEqual([7]);
    expect([...(SHARED_CALLING_CODES.get('44')?.disputedLengths ?? [])].sort()).toEqual([7, 9]);
    expect(SHARED_CALLING_CODES.get('44')?.main).toBe('GB');
    expect(SHARED_CALLING_CODES.has('49')).toBe(false);
  });

  it('keeps every country in the full metadata and only the first per calling code in its own', () => {
    expect(metadata.country_calling_codes['44']).toEqual(['GB', 'GG', 'IM', 'JE']);
    expect(MAIN_COUNTRY_METADATA.country_calling_codes['44']).toEqual(['GB']);
    expect(MAIN_COUNTRY_METADATA.countries.JE).toBe(metadata.countries.JE);
  });

  it('answers as libphonenumber with every country does, for international numbers of every calling code and length', () => {
    const next = digitsFrom(20261125);
    const n = createNumberNormalizer({ defaultRegion: 'GB', memoEntries: 1 });
    let possible = 0;
    let checked = 0;
    for (const code of Object.keys(metadata.country_calling_codes)) {
      for (let length = 3; length <= 16; length++) {
        for (let k = 0; k < 3; k++) {
          const input = `+${code}${next(length)}`;
          const expected = reference(input, 'GB');
          expect(answer(n, input), input).toBe(expected);
          if (expected !== undefined) possible++;
          checked++;
        }
      }
    }
    // Both kinds of answer are exercised, not only refusals.
    expect(possible).toBeGreaterThan(checked / 10);
    expect(checked).toBeGreaterThan(5000);
  });

  it('answers as libphonenumber with every country does where the countries of a calling code disagree', () => {
    const next = digitsFrom(7);
    // Prefixes of the smaller countries (Jersey, Guernsey, the Isle of Man, Canada, Cocos, Bonaire, Tristan da Cunha)
    // and random ones, at every disputed length and one either side.
    const prefixes: Record<string, string[]> = {
      '1': ['204', '416', '604', '800', '212', '268', '876', ''],
      '44': ['1534', '1481', '1624', '7781', '7924', '7624', '20', '1', ''],
      '61': ['8', '89162', '89164', '4', ''],
      '290': ['8', '2', '6', ''],
      '599': ['7', '9', '3', ''],
    };
    // One normaliser per region (a memo of one entry: every spelling is parsed), the disagreements collected and
    // compared once: thousands of spellings, each against the reference.
    const regions = ['GB', 'JE', 'US', 'CA', 'AU', 'CC', undefined] as const;
    const normalizers = regions.map((region) => createNumberNormalizer({ defaultRegion: region, memoEntries: 1 }));
    const disagreements: string[] = [];
    let checked = 0;
    const check = (n: typeof gb, input: string, region: CountryCode | undefined) => {
      checked++;
      const [got, want] = [answer(n, input), reference(input, region)];
      if (got !== want) disagreements.push(`${input} in ${region}: ${got} instead of ${want}`);
    };
    for (const [code, { disputedLengths: lengths }] of SHARED_CALLING_CODES) {
      for (const prefix of prefixes[code] ?? ['']) {
        for (const length of [...lengths].flatMap((l) => [l - 1, l, l + 1])) {
          for (let k = 0; k < 8; k++) {
            const rest = length - prefix.length;
            if (rest < 0) continue;
            const national = prefix + next(rest);
            for (const [i, region] of regions.entries()) {
              const n = normalizers[i]!;
              // International spellings, with a national prefix too (libphonenumber strips one where it may).
              for (const international of [`+${code}${national}`, `+${code}0${national}`, `+${code}1${national}`])
                check(n, international, region);
              if (region === undefined) continue;
              // National spellings in a region of that calling code go through the region's own plan.
              for (const spelling of [national, `0${national}`, `1${national}`]) check(n, spelling, region);
            }
          }
        }
      }
    }
    expect(disagreements).toEqual([]);
    expect(checked).toBeGreaterThan(10_000);
    // Tens of thousands of parses against the reference: seconds of one CPU, many more on a loaded machine.
  }, 120_000);
});
