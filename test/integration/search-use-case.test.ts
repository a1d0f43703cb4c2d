// The one search every route renders: its steps in order, what each refusal is, and what is counted, through the
// services a real gateway builds (in front of the simulator over a real socket).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestParts } from '../../src/request/request-parts.js';
import type { SearchOutcome } from '../../src/search/search-outcome.js';
import { startStack, type Stack } from '../helpers/stack.js';

const request = (authorization?: string): RequestParts => ({
  method: 'GET',
  target: '/v2/contacts/search',
  header: (name) => (name === 'authorization' ? authorization : undefined),
  peerAddress: () => '127.0.0.1',
});
const ask = (what: string) => ({ what, prefer: undefined, requestId: 'use-case-test' });

describe('the search use case', () => {
  let stack: Stack;
  let token: string;

  beforeAll(async () => {
    stack = await startStack({
      env: { CLIENT_RATE_PER_MINUTE: '3', CONSOLE_PROVIDER: 'swissdir', UPSTREAM_TIMEOUT_MS: '5000' },
    });
    token = await stack.login('crm');
  });
  afterAll(async () => {
    await stack.close();
  });

  const usage = async (client: string) =>
    (await stack.gateway.services.guard.usage()).clients.find((c) => c.id === client);

  it('refuses an unknown caller at the identity step and counts nothing for anyone', async () => {
    const outcome = await stack.gateway.services.searches.search(
      { kind: 'request', request: request() },
      ask('+442079460001'),
    );
    expect(outcome).toMatchObject({ step: 'identity', caller: undefined, rateHeaders: undefined });
    expect('refused' in outcome && outcome.refused.status).toBe(401);
  });

  it('answers a known client: a miss by a promise, then a fresh hit synchronously, both counted', async () => {
    const { searches } = stack.gateway.services;
    const asker = { kind: 'request', request: request(`Bearer ${token}`) } as const;
    const miss = (await searches.search(asker, ask('020 7946 0001'))) as SearchOutcome;
    expect(miss).toMatchObject({ caller: 'crm', fresh: false, lookup: { e164: '+442079460001', cache: 'miss' } });
    const hit = searches.search(asker, ask('+44 20 7946 0001'));
    expect(hit).not.toBeInstanceOf(Promise);
    expect(hit).toMatchObject({ fresh: true, lookup: { cache: 'hit' } });
    expect(await usage('crm')).toMatchObject({ searches: 2, upstreamCalls: 1 });
  });

  it('takes the rate before it reads the number: an impossible number counts, and over the rate is refused first', async () => {
    const { searches } = stack.gateway.services;
    const asker = { kind: 'client', client: 'pbx' } as const;
    expect(searches.search(asker, ask('12'))).toMatchObject({ step: 'number', caller: 'pbx' });
    searches.search(asker, ask('+442079460001'));
    searches.search(asker, ask('+442079460001'));
    const refused = searches.search(asker, ask('12'));
    expect(refused).toMatchObject({ step: 'rate', refused: { code: 'too_many_requests' } });
    expect((refused as SearchOutcome).rateHeaders).toBeDefined();
  });

  it('counts the console as its own caller, limited by its own limits', async () => {
    const { searches } = stack.gateway.services;
    const outcome = await searches.search({ kind: 'console', request: request() }, ask('020 7946 0002'));
    expect(outcome).toMatchObject({ caller: 'console', lookup: { e164: '+442079460002' } });
    expect('found' in outcome).toBe(true);
    expect(Object.keys(outcome.rateHeaders ?? {}).length).toBeGreaterThan(0);
  });

  it('reads a number into E.164 or says why it is none, for a batch that groups spellings', () => {
    const { searches } = stack.gateway.services;
    expect(searches.numberOf('020 7946 0001')).toEqual({ e164: '+442079460001' });
    expect(searches.numberOf('anonymous')).toMatchObject({ refused: { status: 400 } });
  });
});
