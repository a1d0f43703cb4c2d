// The log line's string quoting: the same text JSON.stringify writes, for every kind of character.
import { describe, expect, it } from 'vitest';
import { jsonString } from './logger.js';

describe('jsonString', () => {
  it.each([
    '',
    'GET',
    '/v2/contacts/search',
    'cf38ede1-424a-40cf-8633-93b5b920afc0',
    'a "quoted" name',
    'back\\slash',
    'tab\there',
    'new\nline',
    '\u0000\u001f',
    '\u007f delete',
    'café',
    'Zürich ☎',
    '😀 pair',
    'lone \ud800 surrogate',
    'lone \udc00 low',
    '</script>',
  ])('writes %j as JSON.stringify does', (text) => {
    expect(jsonString(text)).toBe(JSON.stringify(text));
    expect(JSON.parse(jsonString(text))).toBe(text);
  });
});
