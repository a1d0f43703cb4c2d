// Turns a telephone number in any usual spelling into E.164, so every spelling is one cache entry and
// one upstream call; anything that is not a possible number is refused before it can cost money.
import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/min';
import { LRUCache } from 'lru-cache';
import { GatewayError } from '../errors.js';

export interface NumberNormalizer {
  /**
   * The E.164 form of `raw`; throws GatewayError('invalid_number') otherwise, whose detail names `source`
   * (default: the `what` query parameter; the purge route passes its path).
   */
  normalize(raw: string | undefined, source?: string): string;
  /** The E.164 form of a spelling already seen and found valid, synchronously; otherwise undefined. */
  peek(raw: string): string | undefined;
}

export interface NormalizerOptions {
  defaultRegion: CountryCode | undefined;
  /** Spellings remembered, so the hit path skips parsing; each entry is a few dozen bytes. */
  memoEntries?: number;
}

const MAX_LENGTH = 40;
// Digits, one leading plus, and the separators people type; letters (vanity numbers) are refused.
const ALLOWED = /^\+?[0-9\s().\-/]+$/;

const INVALID = Symbol('invalid');

export function createNumberNormalizer(options: NormalizerOptions): NumberNormalizer {
  const memo = new LRUCache<string, string | typeof INVALID>({ max: options.memoEntries ?? 10_000 });

  function parse(raw: string): string | typeof INVALID {
    const text = raw.trim();
    if (text.length === 0 || text.length > MAX_LENGTH || !ALLOWED.test(text)) return INVALID;
    const digits = text.replace(/\D/g, '');
    if (digits.length < 3) return INVALID;
    // Without a region, "00" is the only international prefix we can assume.
    const input =
      options.defaultRegion === undefined && /^00[1-9]/.test(digits) && !text.startsWith('+')
        ? `+${digits.slice(2)}`
        : text;
    const parsed = parsePhoneNumberFromString(input, { defaultCountry: options.defaultRegion, extract: false });
    if (!parsed || !parsed.isPossible()) return INVALID;
    return parsed.number;
  }

  return {
    peek(raw) {
      const e164 = memo.get(raw);
      return e164 === INVALID ? undefined : e164;
    },
    normalize(raw, source = 'The value of "what"') {
      // Missing is not an impossible number: a plain bad request, as its title says.
      if (raw === undefined) throw new GatewayError('bad_request', 'The query parameter "what" is required.');
      // Over-long input is refused before it can occupy the memo.
      let e164 = raw.length > MAX_LENGTH ? INVALID : memo.get(raw);
      if (e164 === undefined) {
        e164 = parse(raw);
        memo.set(raw, e164);
      }
      if (e164 === INVALID) {
        throw new GatewayError(
          'invalid_number',
          `${source} is not a possible telephone number. Use international (+44 20 7946 0000) or national format.`,
        );
      }
      return e164;
    },
  };
}
