import { describe, expect, it } from 'vitest';
import { filterToProvider } from './provider-filter.js';
import { GatewayError } from '../../base/errors.js';

const defaults = {
  provider: 'swissdir',
  resultsPath: 'results',
  providerPath: 'provider.id',
  totalPath: 'total',
  providerNamePath: 'provider.name',
};
const entry = (provider: string, id: string) => ({ id, provider: { id: provider, name: provider } });
const named = (provider: string, name: string, id: string) => ({ id, provider: { id: provider, name } });

describe('filterToProvider', () => {
  it('keeps only the named provider and sets the total to what is left', () => {
    const body = JSON.stringify({
      query: { what: '+1' },
      total: 3,
      results: [entry('swissdir', 'a'), entry('openbook', 'b'), entry('swissdir', 'c')],
    });
    const out = filterToProvider(body, defaults);
    expect(JSON.parse(out.body)).toEqual({
      query: { what: '+1' },
      total: 2,
      results: [entry('swissdir', 'a'), entry('swissdir', 'c')],
    });
    expect(out).toMatchObject({ kept: 2, removed: 1 });
  });

  it('turns an answer with only other providers into a "no listing" answer', () => {
    const out = filterToProvider(JSON.stringify({ total: 1, results: [entry('openbook', 'b')] }), defaults);
    expect(JSON.parse(out.body)).toEqual({ total: 0, results: [] });
  });

  it('follows configured paths for results, provider and total', () => {
    const body = JSON.stringify({ data: { hits: [{ src: 'swissdir' }, { src: 'openbook' }], count: 2 } });
    const out = filterToProvider(body, {
      provider: 'swissdir',
      resultsPath: 'data.hits',
      providerPath: 'src',
      totalPath: 'data.count',
      providerNamePath: 'name',
    });
    expect(JSON.parse(out.body)).toEqual({ data: { hits: [{ src: 'swissdir' }], count: 1 } });
  });

  it.each(['swissdir', 'SwissDir', 'SWISSDIR', 'Swiss Directory', 'swiss directory'])(
    'matches the provider by id or by name, in any case: %s',
    (provider) => {
      const body = JSON.stringify({
        total: 2,
        results: [named('swissdir', 'Swiss Directory', 'a'), named('openbook', 'OpenBook', 'b')],
      });
      const out = filterToProvider(body, { ...defaults, provider });
      expect(out).toMatchObject({ kept: 1, removed: 1, otherProviders: ['openbook'] });
      expect(JSON.parse(out.body).results).toEqual([named('swissdir', 'Swiss Directory', 'a')]);
    },
  );

  it('names the other providers of an answer (ids, each once)', () => {
    const body = JSON.stringify({
      total: 3,
      results: [entry('openbook', 'a'), entry('citylines', 'b'), entry('openbook', 'c')],
    });
    expect(filterToProvider(body, defaults).otherProviders).toEqual(['openbook', 'citylines']);
  });

  it('refuses a body it cannot filter rather than pass it through', () => {
    expect(() => filterToProvider('not json', defaults)).toThrow(GatewayError);
    expect(() => filterToProvider(JSON.stringify({ items: [] }), defaults)).toThrow(/unexpected format/);
  });
});
