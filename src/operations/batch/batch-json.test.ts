// The batch's renderer: one item per number as sent, the upstream's JSON or the problem, and the caller's last rate.
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../base/errors.js';
import type { SearchFound, SearchOutcome, SearchRefused } from '../../search/search-outcome.js';
import { renderBatchJson } from './batch-json.js';

const UPSTREAM_BODY = '{"total":1,"results":[{"displayName":"Acme Ltd"}]}';

const found = (e164: string, rateHeaders?: Record<string, string>): SearchFound => ({
  caller: 'crm',
  rateHeaders,
  lookup: { e164, cache: 'miss' },
  preferenceApplied: undefined,
  found: { body: UPSTREAM_BODY, contentType: 'application/json', cacheStatus: 'callerid-gateway; fwd=miss' },
  fresh: false,
});

const refused = (error: GatewayError, e164?: string): SearchRefused => ({
  caller: 'crm',
  rateHeaders: undefined,
  lookup: e164 === undefined ? undefined : { e164 },
  preferenceApplied: undefined,
  refused: error,
  step: e164 === undefined ? 'number' : 'lookup',
});

describe('renderBatchJson', () => {
  it('answers one item per number in the order sent, spellings of one number sharing its search', () => {
    const hit = found('+442079460001', { ratelimit: '"default";r=598;t=60' });
    const settled = new Map<string, SearchOutcome>([
      ['+44 20 7946 0001', hit],
      ['020 7946 0001', hit],
      ['12', refused(new GatewayError('invalid_number', 'Not a possible number.'))],
    ]);
    const { headers, body } = renderBatchJson(['+44 20 7946 0001', '12', '020 7946 0001'], settled, 'req-1');
    const { results } = JSON.parse(body) as { results: Record<string, unknown>[] };
    expect(results.map((r) => [r['what'], r['e164'], r['status']])).toEqual([
      ['+44 20 7946 0001', '+442079460001', 200],
      ['12', null, 400],
      ['020 7946 0001', '+442079460001', 200],
    ]);
    // The upstream's JSON goes in as it came, as the single search passes it through.
    expect(results[0]!['body']).toEqual(JSON.parse(UPSTREAM_BODY));
    expect(results[0]!['cacheStatus']).toBe('callerid-gateway; fwd=miss');
    expect(results[1]!['problem']).toMatchObject({
      type: '/docs/problems#invalid-number',
      status: 400,
      detail: 'Not a possible number.',
      requestId: 'req-1',
    });
    expect(headers).toEqual({
      'content-type': 'application/json',
      'cache-control': 'private, no-store',
      ratelimit: '"default";r=598;t=60',
    });
  });

  it("keeps a refusal's extension members and its Cache-Status in the item", () => {
    const error = new GatewayError('upstream_busy', 'Busy.', {
      headers: { 'cache-status': 'callerid-gateway; fwd=miss', 'retry-after': '1' },
      extensions: { reason: 'queue_full' },
    });
    const { body } = renderBatchJson(
      ['+41 44 668 18 00'],
      new Map([['+41 44 668 18 00', refused(error, '+41446681800')]]),
      'r',
    );
    const [item] = (JSON.parse(body) as { results: Record<string, unknown>[] }).results;
    expect(item).toMatchObject({ e164: '+41446681800', status: 503, cacheStatus: 'callerid-gateway; fwd=miss' });
    expect(item!['problem']).toMatchObject({ reason: 'queue_full', title: 'Upstream busy', requestId: 'r' });
  });
});
