import { describe, expect, it } from 'vitest';
import type { RequestParts } from './request-parts.js';
import { bodyByMethod, hostIsValid, leavesConsole, requestRefusal } from './request-rules.js';

const parts = (method: string, target: string, fields: Record<string, string> = {}): RequestParts => ({
  method,
  target,
  header: (name) => fields[name],
  peerAddress: () => undefined,
});
const rules = { takesBody: bodyByMethod, boundOf: (path: string) => (path === '/big' ? 10_000 : 4096) };
const codeOf = (p: RequestParts) => requestRefusal(p, rules)?.code;

describe('the Host field', () => {
  it.each([
    'localhost',
    'localhost:8080',
    'a.example.com',
    'gw_1.internal',
    '192.0.2.1:443',
    '[::1]:8080',
    'example.com.',
  ])('takes %s', (host) => expect(hostIsValid(host)).toBe(true));
  it.each([
    'a b',
    'user@evil',
    'x:abc',
    'a%20b',
    'a:99999',
    'a:',
    'a:0',
    '1.2.3.4.5',
    '1.2.3',
    '256.1.1.1',
    '[zz]',
    'a,b',
    '',
    '[0:0::1]',
  ])('refuses %j', (host) => expect(hostIsValid(host)).toBe(false));
  // Whether an IDNA label is valid is the URL parser's to say, and Node's says it differently by version (Node 20
  // refuses `xn--a`, Node 24 takes it): the Host is taken exactly when the parser reads it as itself.
  it('takes an IDNA name exactly when the URL parser reads it as itself', () => {
    const parsed = URL.canParse('http://xn--a/') && new URL('http://xn--a/').hostname === 'xn--a';
    expect(hostIsValid('xn--a')).toBe(parsed);
  });
  it('takes no Host at all (HTTP/1.0)', () => expect(hostIsValid(undefined)).toBe(true));
  it('refuses an HTTP/1.1 request without Host, and takes an HTTP/1.0 one', () => {
    expect(codeOf({ ...parts('GET', '/x'), httpVersion: '1.1' })).toBe('bad_request');
    expect(codeOf({ ...parts('GET', '/x'), httpVersion: '1.0' })).toBeUndefined();
    expect(codeOf({ ...parts('GET', '/x', { host: 'x' }), httpVersion: '1.1' })).toBeUndefined();
  });
});

describe('the form of the target', () => {
  it.each(['/x', '/x?a=\\b', 'http://h/x', 'https://h:8443/x?y'])('takes %s', (target) =>
    expect(codeOf(parts('GET', target))).toBeUndefined(),
  );
  it.each(['*', 'ftp://h/x', 'HTTP://h/x', 'http://h:99999/x', 'h:443', '/a\\b', 'http://h/a\\b'])(
    'refuses %s with 400',
    (target) => expect(codeOf(parts('GET', target))).toBe('bad_request'),
  );
});

describe('bodies', () => {
  it('skips a small body on a route that takes none, and refuses a larger one, a malformed length or any Transfer-Encoding', () => {
    expect(codeOf(parts('GET', '/x', { 'content-length': '5' }))).toBeUndefined();
    expect(codeOf(parts('GET', '/x', { 'content-length': '1025' }))).toBe('payload_too_large');
    expect(codeOf(parts('GET', '/x', { 'content-length': '1e3' }))).toBe('payload_too_large');
    expect(codeOf(parts('HEAD', '/x', { 'transfer-encoding': 'identity' }))).toBe('payload_too_large');
    expect(codeOf(parts('DELETE', '/x', { 'transfer-encoding': 'chunked' }))).toBe('payload_too_large');
  });
  it('refuses a declared length over the route’s own bound, by its path', () => {
    expect(codeOf(parts('POST', '/x', { 'content-length': '4097' }))).toBe('payload_too_large');
    expect(codeOf(parts('POST', '/big?x=1', { 'content-length': '4097' }))).toBeUndefined();
    expect(codeOf(parts('POST', 'http://h/big', { 'content-length': '10001' }))).toBe('payload_too_large');
  });
  it('says Connection: close, since the body is not read', () => {
    expect(requestRefusal(parts('GET', '/x', { 'content-length': '9999' }), rules)?.headers).toEqual({
      connection: 'close',
    });
  });
});

describe('Authorization', () => {
  it('refuses two fields read as one with 401 and the challenge', () => {
    const refused = requestRefusal(parts('GET', '/x', { authorization: 'Bearer a, Basic b' }), rules);
    expect(refused?.code).toBe('unauthorized');
    expect(refused?.headers['www-authenticate']).toContain('Bearer');
  });
});

describe('targets that leave /console by dot segments', () => {
  it.each([
    '/console/../healthz',
    '/%63onsole/../healthz',
    '/./console/../healthz',
    '/console/%2e%2e/healthz',
    '/CONSOLE/../x',
    'http://h/console/../x',
    '/console%2f..%2fhealthz',
  ])('refuses %s', (target) => expect(leavesConsole(target)).toBe(true));
  it.each([
    '/console',
    '/console/v2/contacts/search?what=../x',
    '/healthz',
    '/./healthz',
    '/v2/../console/x',
    '/console/../console/x',
  ])('lets %s through', (target) => expect(leavesConsole(target)).toBe(false));
  it('answers such a target 404', () => expect(codeOf(parts('GET', '/%63onsole/../healthz'))).toBe('not_found'));
});
