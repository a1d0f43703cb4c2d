import { describe, expect, it } from 'vitest';
import { createCallerNameOf } from './caller-name.js';
import { cutToLength, foldToAscii } from './ascii-fold.js';
import { DIRECTORY_ENTRIES } from '../../simulator/directory.js';

describe('foldToAscii', () => {
  it.each([
    // The simulator directory's own names.
    ['Zoë Hartley', 'Zoe Hartley'],
    ['Müller Jonas', 'Muller Jonas'],
    ['Lucía Núñez', 'Lucia Nunez'],
    ['Lefèvre François', 'Lefevre Francois'],
    ['Ærø Maren', 'AEro Maren'],
    ['Siobhán Ó Briain', 'Siobhan O Briain'],
    ['Åström Björn', 'Astrom Bjorn'],
    ['Wiśniewska Małgorzata', 'Wisniewska Malgorzata'],
    ['Çağla Yıldız', 'Cagla Yildiz'],
    ['Dvořák Tomáš', 'Dvorak Tomas'],
    ['Øystein Berg', 'Oystein Berg'],
    ['Şahin İlker', 'Sahin Ilker'],
    ['Weiß Jürgen', 'Weiss Jurgen'],
    ['Dagný Jónsdóttir', 'Dagny Jonsdottir'],
    ['Müller & Söhne Feinbäckerei Ltd', 'Muller & Sohne Feinbackerei Ltd'],
    ['Øresund Design Studio', 'Oresund Design Studio'],
    // Further Latin letters NFKD cannot take apart.
    ['Œuvre Lœwy', 'OEuvre Loewy'],
    ['Đorđe Ђорђевић', 'Dorde Djordjevic'],
    ['Þóra Guðmundsdóttir', 'THora Gudmundsdottir'],
    ['Łukasz Żółć', 'Lukasz Zolc'],
    ['Nguyễn Thị Minh Khai', 'Nguyen Thi Minh Khai'],
    ['Ħal Qormi', 'Hal Qormi'],
    // Greek and Cyrillic are transliterated.
    ['Γιώργος Παπαδόπουλος', 'Giorgos Papadopoulos'],
    ['Дмитрий Волков', 'Dmitrii Volkov'],
    ['Щукин Юрий', 'Shchukin Iurii'],
    ['Олександр Ґалаґан', 'Oleksandr Galagan'],
    // Scripts that do not fold are dropped; what is left stays.
    ['王伟', ''],
    ['محمد', ''],
    ['שלום', ''],
    ['東京 Trading Co.', 'Trading Co.'],
    // Compatibility forms, typography, and characters unsafe in a SIP display name.
    ['Ｆｕｌｌ ｗｉｄｔｈ', 'Full width'],
    ['ﬁne ﬂowers', 'fine flowers'],
    ['O’Brien – “The Pub”', "O'Brien - 'The Pub'"],
    ['Evil" <sip:x@y>; tag\\', "Evil' sip x y tag"],
    ['  Tabs\tand\nnewlines  ', 'Tabs and newlines'],
  ])('folds %j to %j', (name, ascii) => {
    expect(foldToAscii(name)).toBe(ascii);
  });

  it('leaves only printable ASCII for every name in the simulator directory', () => {
    for (const entry of DIRECTORY_ENTRIES) {
      const folded = foldToAscii(entry.displayName);
      expect(folded, entry.displayName).toMatch(/^[A-Za-z0-9 .,'&()/+-]+$/);
    }
  });
});

describe('cutToLength', () => {
  it.each([
    ['Muster Hans', 15, 'Muster Hans'],
    ['Muller & Sohne Feinbackerei Ltd', 15, 'Muller & Sohne'],
    ['Lantern Row Veterinary Surgery', 15, 'Lantern Row'],
    ['Francois & Fils Wine Merchants', 15, 'Francois & Fils'],
    ['Smith & Jones-Partners', 9, 'Smith'],
    ['Quillfeatherprinting Ltd', 15, 'Quillfeatherpri'],
    ['Exactly fifteen', 15, 'Exactly fifteen'],
    ['Exactly fifteen!', 15, 'Exactly'],
  ])('cuts %j to %d as %j', (text, max, cut) => {
    expect(cutToLength(text, max)).toBe(cut);
    expect(cut.length).toBeLessThanOrEqual(max);
  });
});

describe('callerNameOf', () => {
  const nameOf = createCallerNameOf({ resultsPath: 'results', displayNamePath: 'displayName', maxLength: 15 });

  it("takes the first result's display name, folded and cut", () => {
    const body = JSON.stringify({ results: [{ displayName: 'Núñez-Hartley Zoë' }, { displayName: 'Other' }] });
    expect(nameOf(body)).toEqual({ name: 'Nunez-Hartley' });
  });

  it('says there is no listing for an empty result list, and no name for one that folds to nothing', () => {
    expect(nameOf(JSON.stringify({ total: 0, results: [] }))).toEqual({ none: 'no-listing' });
    expect(nameOf(JSON.stringify({ results: [{ displayName: '王伟' }] }))).toEqual({ none: 'no-name' });
    expect(nameOf(JSON.stringify({ results: [{ name: 'elsewhere' }] }))).toEqual({ none: 'no-name' });
  });
});
