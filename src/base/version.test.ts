// The release constant the exporter's User-Agent names is package.json's version: bumping one without the other fails.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GATEWAY_NAME, GATEWAY_VERSION } from './version.js';

describe('the release constant', () => {
  it("is package.json's name and version", () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      name: string;
      version: string;
    };
    expect(GATEWAY_NAME).toBe(pkg.name);
    expect(GATEWAY_VERSION).toBe(pkg.version);
  });
});
