// The one reading of HTTP Basic (RFC 7617 with RFC 6749 section 2.3.1) and of a form's media type (RFC 9110
// section 8.3.1), as every route uses them.
import { describe, expect, it } from 'vitest';
import { readBasic } from './basic-credentials.js';
import { contentTypeIs, FORM_URLENCODED } from './media-type.js';

const header = (userPass: string) => `Basic ${Buffer.from(userPass, 'utf8').toString('base64')}`;
const encoded = (id: string, secret: string) =>
  header(
    `${new URLSearchParams({ a: id }).toString().slice(2)}:${new URLSearchParams({ a: secret }).toString().slice(2)}`,
  );

describe('readBasic', () => {
  it('reads the id and secret form-urlencoded, as RFC 6749 section 2.3.1 has clients send them', () => {
    for (const [id, secret] of [
      ['crm', 'plain-secret'],
      ['crm', 'a:b+c%d e/é'],
      ['app.v2', '%41+%2'],
    ]) {
      expect(readBasic(encoded(id!, secret!))).toEqual({ id, secret });
      // encodeURIComponent (space as %20) is the same form.
      expect(readBasic(header(`${encodeURIComponent(id!)}:${encodeURIComponent(secret!)}`))).toEqual({ id, secret });
    }
  });

  it('takes a raw half as written only where no form reading exists: no % or +, or a % that escapes nothing', () => {
    expect(readBasic(header('crm:s3cret:with:colons'))).toEqual({ id: 'crm', secret: 's3cret:with:colons' });
    expect(readBasic(header('crm:100%zz'))).toEqual({ id: 'crm', secret: '100%zz' });
    expect(readBasic(header('crm:%C3%28'))).toEqual({ id: 'crm', secret: '%C3%28' }); // escapes that are not UTF-8
    // A raw `+` or a valid escape is read as the form says: the raw secret "a+b" is "a b".
    expect(readBasic(header('crm:a+b'))).toEqual({ id: 'crm', secret: 'a b' });
    expect(readBasic(header('crm:%41'))).toEqual({ id: 'crm', secret: 'A' });
  });

  it('finds a header malformed when it is not token68, not base64 of UTF-8, or names no id and secret', () => {
    for (const bad of [
      'Basic',
      'Basic !!!',
      'Basic a b',
      `Basic ${btoa('no-colon')}`,
      header(':secret'),
      header('crm:'),
      `Basic ${Buffer.from([0x63, 0x3a, 0xff, 0xfe]).toString('base64')}`,
    ]) {
      expect(readBasic(bad), bad).toBe('malformed');
    }
    expect(readBasic(`bAsIc\t${btoa('crm:x')}`)).toEqual({ id: 'crm', secret: 'x' });
  });
});

describe('contentTypeIs', () => {
  it('compares type and subtype case-insensitively, with parameters apart', () => {
    for (const field of [
      FORM_URLENCODED,
      'Application/X-WWW-Form-URLEncoded',
      'application/x-www-form-urlencoded; charset=UTF-8',
      'application/x-www-form-urlencoded ;charset="utf-8"',
      'application/x-www-form-urlencoded;',
    ]) {
      expect(contentTypeIs(field, FORM_URLENCODED), field).toBe(true);
    }
  });

  it('finds no form in another subtype, a malformed field or a charset other than UTF-8', () => {
    for (const field of [
      undefined,
      '',
      'application/x-www-form-urlencoded-evil',
      'application/x-www-form-urlencodedx',
      'application/x-www-form-urlencoded,text/plain',
      'application/x-www-form-urlencoded; charset',
      'application/x-www-form-urlencoded; charset=iso-8859-1',
      'application/json',
      'application',
    ]) {
      expect(contentTypeIs(field, FORM_URLENCODED), String(field)).toBe(false);
    }
  });
});
