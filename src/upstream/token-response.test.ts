// Unit tests of the upstream token response parser: its odd shapes and every malformed body it refuses.

import { describe, expect, it } from 'vitest';
import { parseTokenResponse } from './token-response.js';

const TOKEN = 'eyJ0eXAiOiJKV1QifQ.secret-token-value';

function body(fields: Record<string, unknown>): string {
  return JSON.stringify({
    access_token: TOKEN,
    token_type: 'Bearer',
    expires_in: '90000',
    scope: [{ service: 'SEARCH_contacts_watch', permission: 'READ', orderId: null }],
    uniqueId: null,
    clientId: 'client-1',
    ...fields,
  });
}

function withoutField(name: string): string {
  const data = JSON.parse(body({})) as Record<string, unknown>;
  delete data[name];
  return JSON.stringify(data);
}

describe('parseTokenResponse', () => {
  it('reads the upstream shape: expires_in as a string and scope as an array of objects', () => {
    expect(parseTokenResponse(body({}), 'seconds')).toEqual({ accessToken: TOKEN, lifetimeMs: 90_000_000 });
  });

  it('accepts expires_in as a number', () => {
    expect(parseTokenResponse(body({ expires_in: 3600 }), 'seconds')).toEqual({
      accessToken: TOKEN,
      lifetimeMs: 3_600_000,
    });
  });

  it('takes expires_in as milliseconds when configured so', () => {
    expect(parseTokenResponse(body({}), 'milliseconds').lifetimeMs).toBe(90_000);
  });

  it('accepts a fractional expires_in string', () => {
    expect(parseTokenResponse(body({ expires_in: '1.5' }), 'seconds').lifetimeMs).toBe(1500);
  });

  it('ignores the content of scope, whatever it holds', () => {
    expect(
      parseTokenResponse(body({ scope: [{ service: 'OTHER', permission: 'WRITE', orderId: 'x' }, {}] }), 'seconds')
        .accessToken,
    ).toBe(TOKEN);
    expect(parseTokenResponse(withoutField('scope'), 'seconds').accessToken).toBe(TOKEN);
  });

  it('accepts token_type in any case, and its absence', () => {
    expect(parseTokenResponse(body({ token_type: 'bearer' }), 'seconds').accessToken).toBe(TOKEN);
    expect(parseTokenResponse(body({ token_type: 'BEARER' }), 'seconds').accessToken).toBe(TOKEN);
    expect(parseTokenResponse(withoutField('token_type'), 'seconds').accessToken).toBe(TOKEN);
  });

  const malformed: Array<[string, string]> = [
    ['a body that is not JSON', 'not json at all'],
    ['an empty body', ''],
    ['a JSON array', '[]'],
    ['JSON null', 'null'],
    ['a JSON string', JSON.stringify(TOKEN)],
    ['a missing access_token', withoutField('access_token')],
    ['an empty access_token', body({ access_token: '' })],
    ['a non-string access_token', body({ access_token: 12345 })],
    ['an access_token with a line break', body({ access_token: `${TOKEN}\r\nx-evil: 1` })],
    ['a missing expires_in', withoutField('expires_in')],
    ['expires_in with trailing letters', body({ expires_in: '90000abc' })],
    ['an empty expires_in', body({ expires_in: '' })],
    ['a null expires_in', body({ expires_in: null })],
    ['a negative expires_in', body({ expires_in: '-5' })],
    ['a negative numeric expires_in', body({ expires_in: -5 })],
    ['a zero expires_in', body({ expires_in: '0' })],
    ['an exponent in expires_in', body({ expires_in: '9e4' })],
    ['an infinite expires_in', body({ expires_in: '1' + '0'.repeat(400) })],
    ['a token_type that is not bearer', body({ token_type: 'mac' })],
    ['a null token_type', body({ token_type: null })],
  ];

  for (const [name, text] of malformed) {
    it(`rejects ${name} without quoting the token`, () => {
      let caught: unknown;
      try {
        parseTokenResponse(text, 'seconds');
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(Error);
      expect((caught as Error).message).not.toContain(TOKEN);
      expect((caught as Error).message).not.toContain('secret-token');
    });
  }

  it('rejects a non-JSON body without quoting any of it', () => {
    expect(() => parseTokenResponse('access_token=secret-token-value', 'seconds')).toThrow(
      'token response is not JSON',
    );
  });
});
