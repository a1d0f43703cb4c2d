// The one search every route renders: its steps in order, what each refusal is, and what is counted, through the
// services a real gateway builds (in front of the simulator over a real socket).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestParts } from '../../src/request/request-parts.js';
import { startStack, type Stack } from '../helpers/stack.js';

const request = (authorization?: string): RequestParts => ({
  method: 'GET',
  target: '/v2/contacts/search',
  header: (name) => (name === 'authorization' ? authorization : undefined),
  peerAddress: () => '127.0.0.1',
});
const input = (what: string) => ({ what, prefer: undefined, requestId: 'use-case-test' });

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
    const outcome = await stack.gateway.services.search.byCredentials(request(), input('+442079460001'));
    expect(outcome).toMatchObject({ step: 'identity', caller: undefined, rateHeaders: undefined });
    expect('refused' in outcome && outcome.refused.status).toBe(401);
  });

  it('answers a known client: a miss by a promise, then a fresh hit synchronously, both counted', async () => {
    const { search } = stack.gateway.services;
    const asker = request(`Bearer ${token}`);
    const miss = await search.byCredentials(asker, input('020 7946 0001'));
    expect(miss).toMatchObject({ caller: 'crm', fresh: false, lookup: { e164: '+442079460001', cache: 'miss' } });
    const hit = search.byCredentials(asker, input('+44 20 7946 0001'));
    expect(hit).not.toBeInstanceOf(Promise);
    expect(hit).toMatchObject({ fresh: true, lookup: { cache: 'hit' } });
    expect(await usage('crm')).toMatchObject({ searches: 2, upstreamCalls: 1 });
  });

  it('takes the rate before it reads the number: an impossible number counts, and over the rate is refused first', async () => {
    const { search } = stack.gateway.services;
    expect(search.byClient('pbx', input('12'))).toMatchObject({ outcome: { step: 'number', caller: 'pbx' } });
    search.byClient('pbx', input('+442079460001'));
    search.byClient('pbx', input('+442079460001'));
    const refused = search.byClient('pbx', input('12'));
    expect(refused).toMatchObject({
      rateRefused: { step: 'rate', refused: { code: 'too_many_requests' }, rateHeaders: expect.any(Object) },
    });
  });

  it('counts the console as its own caller, limited by its own limits', async () => {
    const { search } = stack.gateway.services;
    const outcome = await search.byConsole(request(), input('020 7946 0002'));
    expect(outcome).toMatchObject({ caller: 'console', lookup: { e164: '+442079460002' } });
    expect('found' in outcome).toBe(true);
    expect(Object.keys(outcome.rateHeaders ?? {}).length).toBeGreaterThan(0);
  });

  it('reads a number into E.164 or says why it is none, for a batch that groups spellings', () => {
    const { search } = stack.gateway.services;
    expect(search.numberOf('020 7946 0001')).toEqual({ e164: '+442079460001' });
    expect(search.numberOf('anonymous')).toMatchObject({ refused: { status: 400 } });
  });
});
