// The CNAM text renderer: each outcome of a search as the text, status and header fields a PBX reads.
import { describe, expect, it } from 'vitest';
import { GatewayError, type ErrorCode } from '../../base/errors.js';
import type { SearchFound, SearchRefused, SearchStep } from '../../search/search-outcome.js';
import { UPSTREAM_BODY } from '../../upstream/search-client.js';
import { createCallerNameOf } from './caller-name.js';
import { renderCnamText } from './cnam-text.js';

const callerNameOf = createCallerNameOf({
  resultsPath: UPSTREAM_BODY.resultsPath,
  displayNamePath: UPSTREAM_BODY.displayNamePath,
  maxLength: 15,
});
const FALLBACK = 'UNKNOWN';

function found(body: string, extra: Partial<SearchFound> = {}): SearchFound {
  return {
    caller: 'pbx',
    rateHeaders: undefined,
    lookup: { e164: '+442079460001', cache: 'hit' },
    preferenceApplied: undefined,
    found: { body, contentType: 'application/json', cacheStatus: 'callerid-gateway; hit', ageSeconds: 7 },
    fresh: true,
    ...extra,
  };
}

function refused(code: ErrorCode, step: SearchStep, headers: Record<string, string> = {}): SearchRefused {
  return {
    caller: step === 'identity' ? undefined : 'pbx',
    rateHeaders: undefined,
    lookup: undefined,
    preferenceApplied: undefined,
    refused: new GatewayError(code, 'refused', { headers }),
    step,
  };
}

const listed = (name: string) => JSON.stringify({ total: 1, results: [{ displayName: name }] });

describe('renderCnamText', () => {
  it("answers a listed number with its name folded to ASCII, and the cache's fields", () => {
    const answer = renderCnamText(found(listed('Zoë Müller')), callerNameOf, FALLBACK);
    expect(answer.status).toBe(200);
    expect(answer.body).toBe('Zoe Muller');
    expect(answer.headers).toMatchObject({
      'content-type': 'text/plain; charset=utf-8',
      'cache-control': 'private, no-store',
      'cache-status': 'callerid-gateway; hit',
      age: '7',
      'cnam-result': 'listed',
    });
  });

  it('answers the fallback with 200 and says why when nothing is listed or the listing has no name', () => {
    const none = renderCnamText(found(JSON.stringify({ total: 0, results: [] })), callerNameOf, FALLBACK);
    expect([none.status, none.body, none.headers['cnam-result']]).toEqual([200, FALLBACK, 'no-listing']);
    const nameless = renderCnamText(found(JSON.stringify({ results: [{ id: 1 }] })), callerNameOf, FALLBACK);
    expect([nameless.status, nameless.body, nameless.headers['cnam-result']]).toEqual([200, FALLBACK, 'no-name']);
  });

  it('says 401 or 429 only for credentials that are wrong or throttled, with their own header fields', () => {
    const wrong = renderCnamText(
      refused('unauthorized', 'identity', { 'www-authenticate': 'Bearer' }),
      callerNameOf,
      FALLBACK,
    );
    expect([wrong.status, wrong.body, wrong.headers['cnam-result']]).toEqual([401, FALLBACK, 'unauthorized']);
    expect(wrong.headers['www-authenticate']).toBe('Bearer');
    const throttled = renderCnamText(
      refused('too_many_requests', 'identity', { 'retry-after': '60' }),
      callerNameOf,
      FALLBACK,
    );
    expect([throttled.status, throttled.headers['cnam-result'], throttled.headers['retry-after']]).toEqual([
      429,
      'auth-throttled',
      '60',
    ]);
  });

  it('answers every other refusal with 200, the fallback and the reason in CNAM-Result', () => {
    const cases: [ErrorCode, SearchStep, string][] = [
      ['invalid_number', 'number', 'not-a-number'],
      ['deadline_exceeded', 'lookup', 'deadline'],
      ['quota_exhausted', 'lookup', 'quota-exhausted'],
      ['too_many_requests', 'rate', 'rate-limited'],
      ['upstream_busy', 'lookup', 'upstream-unavailable'],
      ['upstream_error', 'lookup', 'upstream-error'],
      ['internal', 'lookup', 'gateway-error'],
    ];
    for (const [code, step, result] of cases) {
      const answer = renderCnamText(refused(code, step), callerNameOf, FALLBACK);
      expect([code, answer.status, answer.body, answer.headers['cnam-result']]).toEqual([code, 200, FALLBACK, result]);
    }
  });

  it("keeps the rate step's fields and the applied wait, and drops a lookup refusal's other fields", () => {
    const rate = renderCnamText(refused('too_many_requests', 'rate', { 'retry-after': '5' }), callerNameOf, FALLBACK);
    expect(rate.headers['retry-after']).toBe('5');
    const lookup = refused('upstream_busy', 'lookup', {
      'retry-after': '30',
      'cache-status': 'callerid-gateway; fwd=miss',
    });
    lookup.preferenceApplied = 'wait=1';
    const answer = renderCnamText(lookup, callerNameOf, FALLBACK);
    expect(answer.headers['retry-after']).toBeUndefined();
    expect(answer.headers['cache-status']).toBe('callerid-gateway; fwd=miss');
    expect(answer.headers['preference-applied']).toBe('wait=1');
  });
});
