import { describe, expect, it } from 'vitest';
import { isPhone } from './device.js';
import { DESKTOPS, PHONES, TABLETS } from '../../../test/helpers/user-agents.js';

describe('isPhone', () => {
  it.each(Object.entries(PHONES))('refuses a phone User-Agent (%s)', (_, userAgent) => {
    expect(isPhone({ secChUaMobile: undefined, userAgent })).toBe(true);
  });

  it.each(Object.entries(TABLETS))('lets a tablet through (%s)', (_, userAgent) => {
    expect(isPhone({ secChUaMobile: undefined, userAgent })).toBe(false);
  });

  it.each(Object.entries(DESKTOPS))('lets a desktop through (%s)', (_, userAgent) => {
    expect(isPhone({ secChUaMobile: '?0', userAgent })).toBe(false);
  });

  it('trusts Sec-CH-UA-Mobile: ?1 even with a desktop or tablet User-Agent', () => {
    expect(isPhone({ secChUaMobile: '?1', userAgent: DESKTOPS.chromeLinux })).toBe(true);
    expect(isPhone({ secChUaMobile: '?1', userAgent: TABLETS.galaxyTab })).toBe(true);
  });

  it('passes a request without any device headers', () => {
    expect(isPhone({ secChUaMobile: undefined, userAgent: undefined })).toBe(false);
  });
});
