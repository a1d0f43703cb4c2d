// The simulator's bundled directory of fictional contacts, on numbers reserved for drama and fiction only.

type ProviderId = 'swissdir' | 'openbook' | 'citylines';

interface Provider {
  id: ProviderId;
  name: string;
}

type PhoneKind = 'landline' | 'mobile' | 'fax';

export interface DirectoryEntry {
  id: string;
  provider: Provider;
  type: 'person' | 'organization';
  displayName: string;
  person: { givenName: string; familyName: string } | null;
  organization: { name: string } | null;
  phones: { e164: string; display: string; kind: PhoneKind }[];
  address: { street: string; postalCode: string; locality: string; country: string };
}

/** The two providers. @public (the benches read it from the build, dist/simulator/directory.js) */
export const PROVIDERS: Readonly<Record<ProviderId, Provider>> = {
  swissdir: { id: 'swissdir', name: 'SwissDir' },
  openbook: { id: 'openbook', name: 'OpenBook' },
  citylines: { id: 'citylines', name: 'CityLines' },
};

type Who = { given: string; family: string } | { org: string };

interface Row {
  /** Main number (E.164); its kind follows from the range (mobile or landline). */
  n: string;
  /** Which providers list it: s = swissdir, o = openbook, c = citylines. */
  by: string;
  who: Who;
  at: [street: string, postalCode: string, locality: string];
  /** Further numbers on the same entry, e.g. a fax or a mobile beside a landline. */
  also?: [e164: string, kind: PhoneKind][];
}

const P = (given: string, family: string): Who => ({ given, family });
const O = (org: string): Who => ({ org });

// Ofcom drama ranges: 020 7946 0xxx, 0113 496 0xxx, 0161 496 0xxx, 07700 900xxx.
// ACMA fiction ranges: (02) 5550 xxxx and a few of the listed 0491 570 xxx mobiles.
const ROWS: Row[] = [
  { n: '+442079460001', by: 'so', who: P('Zoë', 'Hartley'), at: ['14 Lantern Row', 'E2 7QX', 'London'] },
  { n: '+442079460002', by: 's', who: P('Jonas', 'Müller'), at: ['3 Quillfeather Lane', 'N1 4TT', 'London'] },
  { n: '+442079460003', by: 'o', who: P('Lucía', 'Núñez'), at: ['88 Marigold Terrace', 'SE5 9PL', 'London'] },
  { n: '+442079460004', by: 'so', who: P('François', 'Lefèvre'), at: ['27 Copperbeech Road', 'W6 0XR', 'London'] },
  { n: '+442079460005', by: 's', who: P('Maren', 'Ærø'), at: ['5 Saltmarsh Mews', 'E14 3ZA', 'London'] },
  { n: '+442079460006', by: 'o', who: P('Siobhán', 'Ó Briain'), at: ['61 Wrenfield Gardens', 'NW5 2HB', 'London'] },
  { n: '+442079460007', by: 'so', who: P('Björn', 'Åström'), at: ['9 Kettle Yard', 'SW9 8LD', 'London'] },
  { n: '+442079460010', by: 'soc', who: O('Café Zoë'), at: ['2 Lantern Row', 'E2 7QX', 'London'] },
  {
    n: '+442079460011',
    by: 'so',
    who: O('Núñez Legal LLP'),
    at: ['40 Inkwell Street', 'EC4A 9ZZ', 'London'],
    also: [['+442079460911', 'fax']],
  },
  { n: '+442079460012', by: 's', who: O('Quillfeather Printing Ltd'), at: ['1 Quillfeather Lane', 'N1 4TT', 'London'] },
  {
    n: '+442079460013',
    by: 'oc',
    who: O('Lantern Row Veterinary Surgery'),
    at: ['20 Lantern Row', 'E2 7QY', 'London'],
  },
  { n: '+442079460014', by: 'so', who: P('Priya', 'Raman'), at: ['17 Orchard Close', 'SE22 1FG', 'London'] },
  { n: '+442079460015', by: 'o', who: P('Oliver', 'Pennington'), at: ['4 Thimble Court', 'W4 5QA', 'London'] },
  { n: '+442079460016', by: 's', who: P('Małgorzata', 'Wiśniewska'), at: ['33 Larkspur Avenue', 'E17 6DN', 'London'] },
  { n: '+442079460017', by: 'so', who: O('François & Fils Wine Merchants'), at: ['12 Cask Lane', 'SE1 2VV', 'London'] },
  { n: '+442079460018', by: 'o', who: P('Çağla', 'Yıldız'), at: ['7 Juniper Walk', 'N16 0YE', 'London'] },
  { n: '+442079460019', by: 'so', who: P('Renée', 'Fairweather'), at: ['52 Barometer Street', 'SW11 4KP', 'London'] },
  { n: '+442079460020', by: 's', who: O('Kestrel Taxis'), at: ['Unit 5, Falconer Yard', 'E3 2RR', 'London'] },
  { n: '+441134960001', by: 'so', who: P('Amelia', 'Thornbury'), at: ['8 Bramblewood Drive', 'LS6 3QT', 'Leeds'] },
  { n: '+441134960002', by: 's', who: P('Tomáš', 'Dvořák'), at: ['19 Weaver Street', 'LS11 9ZX', 'Leeds'] },
  { n: '+441134960003', by: 'o', who: P('Declan', 'Moody'), at: ['2 Millpond Row', 'LS7 1AB', 'Leeds'] },
  {
    n: '+441134960004',
    by: 'so',
    who: O('Northgate Dental Practice'),
    at: ['110 Northgate', 'LS2 8JJ', 'Leeds'],
    also: [['+441134960904', 'fax']],
  },
  { n: '+441134960005', by: 's', who: P('Fatima', 'Okafor'), at: ['45 Sycamore Rise', 'LS8 2PE', 'Leeds'] },
  { n: '+441134960006', by: 'o', who: O('Pennine Bicycle Works'), at: ['Arch 3, Viaduct Road', 'LS4 2BW', 'Leeds'] },
  { n: '+441134960007', by: 'so', who: P('Øystein', 'Berg'), at: ['6 Fjord Terrace', 'LS12 5HU', 'Leeds'] },
  { n: '+441134960008', by: 's', who: P('Grace', 'Whitlock'), at: ['71 Cobble Hill', 'LS16 7EX', 'Leeds'] },
  { n: '+441134960009', by: 'o', who: P('Noémie', 'Laurent'), at: ['13 Chestnut Grove', 'LS6 4NF', 'Leeds'] },
  { n: '+441134960010', by: 'soc', who: O('The Copper Kettle Tearoom'), at: ['1 Market Arcade', 'LS1 6AZ', 'Leeds'] },
  { n: '+441134960011', by: 'so', who: P('Arthur', 'Penhaligon'), at: ['29 Slate Quarry Lane', 'LS19 6RT', 'Leeds'] },
  { n: '+441134960012', by: 's', who: P('Isla', 'McCready'), at: ['3 Heather Close', 'LS15 0QW', 'Leeds'] },
  { n: '+441134960013', by: 'o', who: O('Crumpet & Co. Bakery'), at: ['58 Oven Street', 'LS9 7DD', 'Leeds'] },
  { n: '+441134960014', by: 'so', who: P('İlker', 'Şahin'), at: ['16 Tulip Way', 'LS10 3GN', 'Leeds'] },
  { n: '+441614960001', by: 'so', who: P('Anna', 'Müller'), at: ['22 Spindle Street', 'M4 6FF', 'Manchester'] },
  { n: '+441614960001', by: 's', who: P('Jonas', 'Müller'), at: ['22 Spindle Street', 'M4 6FF', 'Manchester'] },
  {
    n: '+441614960002',
    by: 's',
    who: O('Müller & Söhne Feinbäckerei Ltd'),
    at: ['24 Spindle Street', 'M4 6FF', 'Manchester'],
  },
  { n: '+441614960003', by: 'o', who: P('Rhys', 'Llewellyn'), at: ['10 Harp Lane', 'M20 2ZK', 'Manchester'] },
  { n: '+441614960004', by: 'so', who: P('Eilidh', 'MacAulay'), at: ['31 Thistle Court', 'M14 5UP', 'Manchester'] },
  { n: '+441614960005', by: 's', who: P('Jürgen', 'Weiß'), at: ['77 Canal Side', 'M1 7EN', 'Manchester'] },
  { n: '+441614960006', by: 'o', who: P('Zsófia', 'Kovács'), at: ['5 Lilac Crescent', 'M21 8BS', 'Manchester'] },
  { n: '+441614960007', by: 'so', who: O('Harbourside Plumbing'), at: ['Unit 12, Dock Road', 'M50 3XG', 'Manchester'] },
  { n: '+441614960008', by: 's', who: P('Ömer', 'Aydın'), at: ['18 Minaret View', 'M8 9QL', 'Manchester'] },
  { n: '+441614960009', by: 'o', who: O('Ærø Knitwear Co.'), at: ['4 Loom Street', 'M4 1HW', 'Manchester'] },
  { n: '+441614960010', by: 'so', who: P('Dagný', 'Jónsdóttir'), at: ['66 Aurora Road', 'M19 2JD', 'Manchester'] },
  { n: '+441614960011', by: 's', who: O('Crescent Locksmiths'), at: ['9 Keyholder Parade', 'M13 0PA', 'Manchester'] },
  { n: '+441614960012', by: 'oc', who: O('Bramblewood Nursery'), at: ['1 Sapling Lane', 'M33 4TR', 'Manchester'] },
  { n: '+441614960013', by: 'so', who: P('Beatriz', 'Calderón'), at: ['42 Sunflower Street', 'M16 7WB', 'Manchester'] },
  { n: '+441614960014', by: 'o', who: P('Hamish', 'Crane'), at: ['8 Heron Wharf', 'M3 4LQ', 'Manchester'] },
  {
    n: '+441614960015',
    by: 'so',
    who: O('Øresund Design Studio'),
    at: ['3rd floor, 5 Bridge Street', 'M2 1DX', 'Manchester'],
    also: [['+441614960915', 'fax']],
  },
  { n: '+447700900001', by: 'so', who: P('Wen', 'Li'), at: ['12 Paper Lantern Court', 'E1 6RF', 'London'] },
  { n: '+447700900002', by: 's', who: P('Kwame', 'Mensah'), at: ['90 Drumbeat Road', 'SE15 4TQ', 'London'] },
  { n: '+447700900003', by: 'o', who: P('Aoife', 'Ní Bhriain'), at: ['2 Clover Field', 'LS17 8SE', 'Leeds'] },
  { n: '+447700900004', by: 'so', who: P('Ingrid', 'Solberg'), at: ['14 Snowdrop Lane', 'M20 6BN', 'Manchester'] },
  { n: '+447700900005', by: 's', who: P('José', 'Peña'), at: ['5 Olive Grove', 'W12 7HD', 'London'] },
  { n: '+447700900006', by: 'o', who: P('Mei', 'Tanaka'), at: ['30 Blossom Street', 'M1 2AQ', 'Manchester'] },
  { n: '+447700900007', by: 'so', who: P('Sven', 'Lindqvist'), at: ['11 Pinecone Way', 'LS6 1JR', 'Leeds'] },
  { n: '+447700900008', by: 's', who: P('Ana Luísa', 'Gonçalves'), at: ['7 Azulejo Mews', 'SW8 2EY', 'London'] },
  { n: '+447700900009', by: 'o', who: P('Chloé', 'Dubois'), at: ['23 Beret Row', 'N7 9LK', 'London'] },
  { n: '+447700900010', by: 'so', who: P('Harriet', 'Quill'), at: ['1 Inkpot Yard', 'LS2 3MM', 'Leeds'] },
  { n: '+447700900011', by: 'o', who: O('Rainfall Roofing Ltd'), at: ['Unit 2, Gutter Lane', 'M11 4RR', 'Manchester'] },
  { n: '+447700900012', by: 's', who: P('Tomasz', 'Kowalczyk'), at: ['48 Amber Street', 'M4 5JY', 'Manchester'] },
  {
    n: '+441614960020',
    by: 'so',
    who: P('Zoë', 'Núñez-Hartley'),
    at: ['9 Willow Bank', 'M20 3EE', 'Manchester'],
    also: [['+447700900020', 'mobile']],
  },
  { n: '+61255501234', by: 'so', who: O('Sunny Wattle Café'), at: ['3 Banksia Parade', '2000', 'Sydney'] },
  { n: '+61255501235', by: 's', who: P('Ngaio', 'Te Rangi'), at: ['41 Jacaranda Street', '2010', 'Sydney'] },
  { n: '+61255501236', by: 'o', who: O('Bluegum Removals'), at: ['Unit 7, 12 Eucalypt Road', '2150', 'Parramatta'] },
  {
    n: '+61255501237',
    by: 'soc',
    who: O('Kookaburra Accounting'),
    at: ['Level 4, 90 Lorikeet Lane', '2000', 'Sydney'],
  },
  { n: '+61255501238', by: 'o', who: P('Mathéo', 'Girard'), at: ['6 Coral Close', '2026', 'Bondi'] },
  { n: '+61491570156', by: 'so', who: P('Kirra', 'Whitfield'), at: ['15 Saltbush Drive', '2250', 'Gosford'] },
  { n: '+61491570157', by: 's', who: P('Léa', 'Moreau'), at: ['2 Frangipani Court', '2095', 'Manly'] },
  { n: '+61491570158', by: 'o', who: P('Dmitri', 'Volkov'), at: ['80 Ironbark Road', '2145', 'Westmead'] },
  { n: '+61491570159', by: 'so', who: O('Bondi Board Repairs'), at: ['1 Swell Street', '2026', 'Bondi'] },
];

const LETTER_TO_PROVIDER: Record<string, ProviderId> = { s: 'swissdir', o: 'openbook', c: 'citylines' };

/** National display form of the reserved ranges used here (checked against libphonenumber in tests). */
function nationalDisplay(e164: string): string {
  if (e164.startsWith('+4420')) return `020 ${e164.slice(5, 9)} ${e164.slice(9)}`;
  if (e164.startsWith('+441')) return `0${e164.slice(3, 6)} ${e164.slice(6, 9)} ${e164.slice(9)}`;
  if (e164.startsWith('+447')) return `0${e164.slice(3, 7)} ${e164.slice(7)}`;
  if (e164.startsWith('+612')) return `(02) ${e164.slice(4, 8)} ${e164.slice(8)}`;
  if (e164.startsWith('+614')) return `0${e164.slice(3, 6)} ${e164.slice(6, 9)} ${e164.slice(9)}`;
  throw new Error(`not a fiction range number: ${e164}`);
}

function kindOf(e164: string): PhoneKind {
  return e164.startsWith('+447') || e164.startsWith('+614') ? 'mobile' : 'landline';
}

/** FNV-1a, 32 bits: stable ids without crypto (the directory is built synchronously). */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

function toEntry(row: Row, provider: Provider): DirectoryEntry {
  const numbers: [string, PhoneKind][] = [[row.n, kindOf(row.n)], ...(row.also ?? [])];
  const isPerson = 'given' in row.who;
  // Providers spell a person differently, as real directories do: SwissDir puts the family name first.
  const displayName =
    'given' in row.who
      ? provider.id === 'swissdir'
        ? `${row.who.family} ${row.who.given}`
        : `${row.who.given} ${row.who.family}`
      : row.who.org;
  const [street, postalCode, locality] = row.at;
  return {
    id: `${provider.id}:${fnv1a(`${provider.id}|${row.n}|${displayName}`)}`,
    provider,
    type: isPerson ? 'person' : 'organization',
    displayName,
    person: 'given' in row.who ? { givenName: row.who.given, familyName: row.who.family } : null,
    organization: 'org' in row.who ? { name: row.who.org } : null,
    phones: numbers.map(([e164, kind]) => ({ e164, display: nationalDisplay(e164), kind })),
    address: { street, postalCode, locality, country: row.n.startsWith('+61') ? 'AU' : 'GB' },
  };
}

function buildEntries(): readonly DirectoryEntry[] {
  const entries: DirectoryEntry[] = [];
  for (const row of ROWS) {
    for (const letter of row.by) {
      const providerId = LETTER_TO_PROVIDER[letter];
      if (!providerId) throw new Error(`unknown provider letter ${letter} for ${row.n}`);
      entries.push(toEntry(row, PROVIDERS[providerId]));
    }
  }
  return Object.freeze(entries);
}

/** Every entry of the bundled directory, in table order. */
export const DIRECTORY_ENTRIES: readonly DirectoryEntry[] = buildEntries();

export interface DirectoryIndex {
  /** Entries listing this exact E.164 number on any of their phones; empty when unlisted. */
  lookup(e164: string): readonly DirectoryEntry[];
  /** Every listed E.164 number. */
  numbers(): string[];
}

export function createDirectoryIndex(entries: readonly DirectoryEntry[] = DIRECTORY_ENTRIES): DirectoryIndex {
  const byNumber = new Map<string, DirectoryEntry[]>();
  for (const entry of entries) {
    for (const phone of entry.phones) {
      const list = byNumber.get(phone.e164) ?? [];
      list.push(entry);
      byNumber.set(phone.e164, list);
    }
  }
  return {
    lookup: (e164) => byNumber.get(e164) ?? [],
    numbers: () => [...byNumber.keys()],
  };
}

/** Numbers with known listings, for demos, tests and benchmarks. */
export const SAMPLE_NUMBERS = {
  bothProviders: ['+442079460001', '+441134960004'],
  swissdirOnly: ['+442079460002', '+441614960005'],
  openbookOnly: ['+442079460003', '+441134960006'],
  /** Two SwissDir entries (a household) and one OpenBook entry. */
  sharedHousehold: '+441614960001',
  /** Listed by SwissDir, OpenBook and CityLines. */
  threeProviders: '+442079460010',
  mobile: '+447700900001',
  fax: '+442079460911',
  australian: '+61255501234',
  /** In a fiction range, but listed by nobody. */
  unlisted: '+442079460999',
} as const;
