// The numbers the console suggests: spellings the configured DEFAULT_REGION accepts, so a newcomer is never
// shown an example the console then refuses.
import examples from 'libphonenumber-js/mobile/examples';
import { getExampleNumber, type CountryCode } from 'libphonenumber-js/min';

export interface ConsoleExamples {
  international: string;
  /** Absent without DEFAULT_REGION: only international spellings are accepted then. */
  national: string | undefined;
}

// The demo directory's fictional numbers (Ofcom's drama range): they find entries in demo mode.
const DRAMA: ConsoleExamples = { international: '+44 20 7946 0001', national: '020 7946 0001' };

export function consoleExamples(region: CountryCode | undefined): ConsoleExamples {
  if (region === undefined) return { international: DRAMA.international, national: undefined };
  if (region === 'GB') return DRAMA;
  // libphonenumber's example mobile number of the region: a well-formed number, not a real subscriber's.
  const example = getExampleNumber(region, examples);
  if (example === undefined) return { international: DRAMA.international, national: undefined };
  return { international: example.formatInternational(), national: example.formatNational() };
}
