// /openapi.json as two independent OpenAPI linters judge it: Spectral's `spectral:oas` recommended rules and
// Redocly's `recommended` configuration, both through their own libraries. No error and no warning.
import { createConfig, lintFromString } from '@redocly/openapi-core';
import spectralCore from '@stoplight/spectral-core';
import spectralParsers from '@stoplight/spectral-parsers';
import { oas } from '@stoplight/spectral-rulesets';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../helpers/stack.js';

describe('the OpenAPI document under the linters', () => {
  let stack: Stack;
  let text: string;
  beforeAll(async () => {
    stack = await startStack({ env: { CONSOLE_PROVIDER: 'swissdir' } });
    text = await (await fetch(`${stack.gateway.url}/openapi.json`)).text();
  });
  afterAll(async () => {
    await stack.close();
  });

  it('passes Spectral (spectral:oas, recommended) with no finding', async () => {
    const spectral = new spectralCore.Spectral();
    spectral.setRuleset({ extends: [[oas as never, 'recommended']] });
    const results = await spectral.run(new spectralCore.Document(text, spectralParsers.Json));
    expect(results.map((r) => `${r.code} ${r.path.join('.')}: ${r.message}`)).toEqual([]);
  });

  it('passes Redocly (recommended) with no finding', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: text, absoluteRef: '/openapi.json', config });
    expect(problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`)).toEqual([]);
  });
});
