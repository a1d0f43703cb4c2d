// Turns a telephone number in any usual spelling into E.164, so every spelling is one cache entry and
// one upstream call; anything that is not a possible number is refused before it can cost money.
import {
  Metadata,
  parsePhoneNumberFromString,
  type CountryCode,
  type MetadataJson,
  type PhoneNumber,
} from 'libphonenumber-js/core';
import metadata from 'libphonenumber-js/metadata.min.json';
import { LRUCache } from 'lru-cache';
import { GatewayError } from '../base/errors.js';

export interface NumberNormalizer {
  /**
   * The E.164 form of `raw`; throws GatewayError('bad_request') when it is missing or empty and
   * GatewayError('invalid_number') when it is no possible number, whose detail names `source`
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

/**
 * The parse of a new number costs mostly its country detection: where several countries share a calling code (+1,
 * +44, +61, ...), libphonenumber matches the national number against each country's number-type patterns, building
 * a regular expression of kilobytes per match, to tell (say) Jersey from Great Britain. The E.164 form and whether it
 * is possible depend on that country only through its possible lengths: whether the number's length is one, and
 * whether a national prefix is stripped (not when what is left is too short for the country). So numbers are parsed
 * with the main country of each calling code alone, and again with every country when the answer could differ: the
 * countries of the calling code disagree on the length, or the digits begin with a national prefix.
 */
export const MAIN_COUNTRY_METADATA: MetadataJson = {
  ...metadata,
  country_calling_codes: Object.fromEntries(
    Object.entries(metadata.country_calling_codes).map(([code, countries]) => [code, countries.slice(0, 1)]),
  ),
};

/** A calling code whose countries disagree on some possible length. */
interface SharedCallingCode {
  main: CountryCode;
  /** The national number lengths possible in some of its countries and not in others. */
  disputedLengths: ReadonlySet<number>;
  /** Each country's national prefix as libphonenumber matches it (`^(?:...)`); absent where it has none. */
  nationalPrefixes: ReadonlyMap<CountryCode, RegExp | undefined>;
}

/** Per calling code whose countries disagree on a possible length; every other calling code parses the same either way. */
export const SHARED_CALLING_CODES: ReadonlyMap<string, SharedCallingCode> = sharedCallingCodes(metadata);

function sharedCallingCodes(json: MetadataJson): Map<string, SharedCallingCode> {
  const plans = new Metadata(json);
  const shared = new Map<string, SharedCallingCode>();
  for (const [code, countries] of Object.entries(json.country_calling_codes)) {
    if (countries.length < 2) continue;
    const nationalPrefixes = new Map<CountryCode, RegExp | undefined>();
    const lengthSets = countries.map((country) => {
      plans.selectNumberingPlan(country);
      // Not in the typings, but a method of the exported Metadata class (libphonenumber's own prefix step calls it).
      const plan = plans.numberingPlan as unknown as { nationalPrefixForParsing(): string | undefined } | undefined;
      const prefix = plan?.nationalPrefixForParsing();
      nationalPrefixes.set(country, prefix ? new RegExp(`^(?:${prefix})`) : undefined);
      return new Set(plans.numberingPlan?.possibleLengths() ?? []);
    });
    const disputedLengths = new Set<number>();
    for (const set of lengthSets)
      for (const length of set) if (lengthSets.some((other) => !other.has(length))) disputedLengths.add(length);
    if (disputedLengths.size > 0) shared.set(code, { main: countries[0]!, disputedLengths, nationalPrefixes });
  }
  return shared;
}

export function createNumberNormalizer(options: NormalizerOptions): NumberNormalizer {
  const memo = new LRUCache<string, string | typeof INVALID>({ max: options.memoEntries ?? 10_000 });
  const parseOptions = { defaultCountry: options.defaultRegion, extract: false };

  function parse(raw: string): string | typeof INVALID {
    const text = raw.trim();
    if (text.length === 0 || text.length > MAX_LENGTH || !ALLOWED.test(text)) return INVALID;
    const digits = text.replace(/\D/g, '');
    if (digits.length < 3) return INVALID;
    // Without a region, "00" is the only international prefix we can assume.
    const internationalised = options.defaultRegion === undefined && /^00[1-9]/.test(digits) && !text.startsWith('+');
    const inputDigits = internationalised ? digits.slice(2) : digits;
    const input = internationalised ? `+${inputDigits}` : text;
    let parsed = parsePhoneNumberFromString(input, parseOptions, MAIN_COUNTRY_METADATA);
    if (parsed && !countryFree(parsed, input, inputDigits))
      parsed = parsePhoneNumberFromString(input, parseOptions, metadata);
    if (!parsed || !parsed.isPossible()) return INVALID;
    return parsed.number;
  }

  /** True when the country among those sharing the calling code cannot change the parse (see MAIN_COUNTRY_METADATA). */
  function countryFree(parsed: PhoneNumber, input: string, digits: string): boolean {
    const shared = SHARED_CALLING_CODES.get(parsed.countryCallingCode);
    if (shared === undefined) return true;
    const { nationalNumber } = parsed;
    if (shared.disputedLengths.has(nationalNumber.length)) return false;
    // The digits the national prefix step saw, and the plan it used: the main country's for an international number,
    // the default region's for a national one. They must be the national number untouched, with no prefix to strip.
    const international = input.startsWith('+');
    const rest = international ? digits.slice(parsed.countryCallingCode.length) : digits;
    const plan = international ? shared.main : options.defaultRegion;
    if (rest !== nationalNumber || plan === undefined || !shared.nationalPrefixes.has(plan)) return false;
    return shared.nationalPrefixes.get(plan)?.test(rest) !== true;
  }

  return {
    peek(raw) {
      const e164 = memo.get(raw);
      return e164 === INVALID ? undefined : e164;
    },
    normalize(raw, source = 'The value of "what"') {
      // Missing or empty (`what=`) is not an impossible number: a plain bad request, as its title says.
      if (raw === undefined || raw === '') {
        throw new GatewayError(
          'bad_request',
          raw === undefined ? 'The query parameter "what" is required.' : `${source} is empty.`,
        );
      }
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
