// Misspelled settings are named at start with the nearest real one, never silently ignored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SETTING_NAMES } from '../../src/config/config.js';
import { unknownSettingLine, unknownSettings } from '../../src/config/unknown-settings.js';
import { startStack, type Stack } from '../helpers/stack.js';

describe('unknownSettings', () => {
  it('names a setting a letter off, whatever its prefix, with the closest real one', () => {
    expect(unknownSettings({ UPSTEAM_TIMEOUT_MS: '100' }, SETTING_NAMES)).toEqual([
      { name: 'UPSTEAM_TIMEOUT_MS', closest: 'UPSTREAM_TIMEOUT_MS' },
    ]);
  });

  it("names any variable carrying one of the gateway's prefixes that is no setting", () => {
    const found = unknownSettings({ CACHE_TTL: '5', REDIS_HOST: 'x', CONSOLE_RATE_TOTAL: '3' }, SETTING_NAMES);
    expect(found.map((u) => u.name)).toEqual(['CACHE_TTL', 'REDIS_HOST']);
    expect(found[0]!.closest).toBe('CACHE_TTL_SECONDS');
  });

  it('leaves alone what other software sets: generic prefixes, names without an underscore, far-off names', () => {
    const env = {
      HTTP_PROXY: 'x',
      HOME: '/root',
      PATH: '/bin',
      NODE_OPTIONS: '',
      HOSTNAME: 'h',
      npm_config_cache: 'c',
    };
    expect(unknownSettings(env, SETTING_NAMES)).toEqual([]);
  });

  it('says what is wrong in one line', () => {
    expect(unknownSettingLine({ name: 'UPSTEAM_TIMEOUT_MS', closest: 'UPSTREAM_TIMEOUT_MS' })).toBe(
      'UPSTEAM_TIMEOUT_MS is not a setting of the gateway and is ignored; did you mean UPSTREAM_TIMEOUT_MS?',
    );
  });
});

describe('a gateway started with a misspelled setting', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { UPSTEAM_TIMEOUT_MS: '100' } });
  });
  afterAll(async () => {
    await stack.close();
  });

  it('logs one warning naming the variable and the closest setting', () => {
    const warnings = stack.logs.filter((l) => l.fields.event === 'unknown_setting');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      level: 'warn',
      fields: { variable: 'UPSTEAM_TIMEOUT_MS', closest: 'UPSTREAM_TIMEOUT_MS' },
    });
  });
});
