// Folds a display name to the ASCII a PBX can show (docs/pbx.md, "CNAM rules"): letters NFKD cannot take apart are
// spelled out (ß→ss, Ø→O, Æ→AE, Þ→TH, ...), accents dropped, Greek and Cyrillic transliterated, everything
// else (other scripts, symbols) dropped; only characters safe in a SIP display name and a dialplan remain.

/** Letters with no decomposition into a base letter plus marks, and typographic punctuation. */
const SPELLED: Record<string, string> = {
  ß: 'ss',
  ẞ: 'SS',
  Ø: 'O',
  ø: 'o',
  Æ: 'AE',
  æ: 'ae',
  Œ: 'OE',
  œ: 'oe',
  Ł: 'L',
  ł: 'l',
  Đ: 'D',
  đ: 'd',
  Ð: 'D',
  ð: 'd',
  Þ: 'TH',
  þ: 'th',
  ı: 'i',
  Ħ: 'H',
  ħ: 'h',
  Ŧ: 'T',
  ŧ: 't',
  Ŋ: 'NG',
  ŋ: 'ng',
  ĸ: 'q',
  Ə: 'E',
  ə: 'e',
  Ɛ: 'E',
  ɛ: 'e',
  Ʒ: 'Z',
  ʒ: 'z',
  Ɨ: 'I',
  ɨ: 'i',
  Ƶ: 'Z',
  ƶ: 'z',
  Ɓ: 'B',
  ɓ: 'b',
  Ɗ: 'D',
  ɗ: 'd',
  Ƙ: 'K',
  ƙ: 'k',
  Ơ: 'O',
  ơ: 'o',
  Ư: 'U',
  ư: 'u',
  '\u2018': "'",
  '\u2019': "'",
  '\u201a': "'",
  '\u201b': "'",
  ʼ: "'",
  '`': "'",
  '´': "'",
  '\u201c': "'",
  '\u201d': "'",
  '\u201e': "'",
  '"': "'",
  '«': "'",
  '»': "'",
  '\u2010': '-',
  '\u2011': '-',
  '\u2012': '-',
  '\u2013': '-',
  '\u2014': '-',
  '\u2212': '-',
  '·': ' ',
};

/** Greek (ELOT 743, simplified) and Cyrillic (Russian, Ukrainian, Serbian and Bulgarian letters; passport-style). */
const TRANSLIT: Record<string, string> = {
  α: 'a',
  β: 'v',
  γ: 'g',
  δ: 'd',
  ε: 'e',
  ζ: 'z',
  η: 'i',
  θ: 'th',
  ι: 'i',
  κ: 'k',
  λ: 'l',
  μ: 'm',
  ν: 'n',
  ξ: 'x',
  ο: 'o',
  π: 'p',
  ρ: 'r',
  σ: 's',
  ς: 's',
  τ: 't',
  υ: 'y',
  φ: 'f',
  χ: 'ch',
  ψ: 'ps',
  ω: 'o',
  а: 'a',
  б: 'b',
  в: 'v',
  г: 'g',
  д: 'd',
  е: 'e',
  ё: 'e',
  ж: 'zh',
  з: 'z',
  и: 'i',
  й: 'i',
  к: 'k',
  л: 'l',
  м: 'm',
  н: 'n',
  о: 'o',
  п: 'p',
  р: 'r',
  с: 's',
  т: 't',
  у: 'u',
  ф: 'f',
  х: 'kh',
  ц: 'ts',
  ч: 'ch',
  ш: 'sh',
  щ: 'shch',
  ъ: '',
  ы: 'y',
  ь: '',
  э: 'e',
  ю: 'iu',
  я: 'ia',
  є: 'ie',
  і: 'i',
  ї: 'i',
  ґ: 'g',
  ђ: 'dj',
  ј: 'j',
  љ: 'lj',
  њ: 'nj',
  ћ: 'c',
  џ: 'dz',
  ў: 'u',
};

/** What may stay: letters, digits, space and the punctuation names use; `"`, `\`, `<`, `>`, `;` would break a SIP header. */
const SAFE = /[^A-Za-z0-9 .,'&()/+-]/g;
const MARKS = /\p{M}/gu;
const SPACES = /\s+/g;
const GREEK_OU = /[οΟ][υΥ]/g;

function spellOut(ch: string): string {
  const spelled = SPELLED[ch];
  if (spelled !== undefined) return spelled;
  const lower = ch.toLowerCase();
  const translit = TRANSLIT[lower];
  if (translit === undefined) return ch;
  // An upper-case letter starts its transliteration with a capital: Щ → Shch, Θ → Th.
  return lower === ch || translit === '' ? translit : translit[0]!.toUpperCase() + translit.slice(1);
}

/** The ASCII spelling of `name`; empty when nothing in it can be written in ASCII. */
export function foldToAscii(name: string): string {
  let out = '';
  // Decomposed first, so a letter with marks (é, Ǻ, ї) meets the tables as its base letter.
  // Greek ου is one sound, written ou (ELOT 743), not o + y.
  for (const ch of name
    .normalize('NFKD')
    .replace(MARKS, '')
    .replace(GREEK_OU, (ou) => (ou[0] === 'Ο' ? 'Ou' : 'ou'))) {
    out += ch.charCodeAt(0) < 0x80 && ch !== '"' && ch !== '`' ? ch : spellOut(ch);
  }
  return out.replace(SAFE, ' ').replace(SPACES, ' ').trim();
}

/**
 * At most `max` characters, cut at the last space that leaves a name of at most `max` (and then without a
 * dangling `&`, `-`, `,`, `/` or `+`); a single word longer than `max` is cut inside the word.
 */
export function cutToLength(text: string, max: number): string {
  if (text.length <= max) return text;
  const space = text.lastIndexOf(' ', max);
  const cut = space > 0 ? text.slice(0, space) : text.slice(0, max);
  const tidy = cut.replace(/[\s&,/+-]+$/, '');
  return tidy.length > 0 ? tidy : cut.trimEnd();
}
