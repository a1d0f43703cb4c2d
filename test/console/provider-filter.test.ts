import { describe, expect, it } from 'vitest';
import { filterToProvider } from '../../src/console/provider-filter.js';
import { GatewayError } from '../../src/errors.js';

const defaults = { provider: 'swissdir', resultsPath: 'results', providerPath: 'provider.id', totalPath: 'total' };
const entry = (provider: string, id: string) => ({ id, provider: { id: provider, name: provider } });

describe('filterToProvider', () => {
  it('keeps only the named provider and sets the total to what is left', () => {
    const body = JSON.stringify({ query: { what: '+1' }, total: 3, results: [entry('swissdir', 'a'), entry('openbook', 'b'), entry('swissdir', 'c')] });
    const out = filterToProvider(body, defaults);
    expect(JSON.parse(out.body)).toEqual({ query: { what: '+1' }, total: 2, results: [entry('swissdir', 'a'), entry('swissdir', 'c')] });
    expect(out).toMatchObject({ kept: 2, removed: 1 });
  });

  it('turns an answer with only other providers into a "no listing" answer', () => {
    const out = filterToProvider(JSON.stringify({ total: 1, results: [entry('openbook', 'b')] }), defaults);
    expect(JSON.parse(out.body)).toEqual({ total: 0, results: [] });
  });

  it('follows configured paths for results, provider and total', () => {
    const body = JSON.stringify({ data: { hits: [{ src: 'swissdir' }, { src: 'openbook' }], count: 2 } });
    const out = filterToProvider(body, { provider: 'swissdir', resultsPath: 'data.hits', providerPath: 'src', totalPath: 'data.count' });
    expect(JSON.parse(out.body)).toEqual({ data: { hits: [{ src: 'swissdir' }], count: 1 } });
  });

  it('refuses a body it cannot filter rather than pass it through', () => {
    expect(() => filterToProvider('not json', defaults)).toThrow(GatewayError);
    expect(() => filterToProvider(JSON.stringify({ items: [] }), defaults)).toThrow(/unexpected format/);
  });
});
