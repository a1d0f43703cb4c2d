// `npm ci` on the Node the README names installs without a warning: no dependency refuses this Node (engines), and
// every install script is approved or denied in package.json's allowScripts.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import semver from 'semver';

interface LockPackage {
  engines?: { node?: string } | string[];
}

describe('the lockfile', () => {
  it('holds no package whose engines exclude the Node version package.json names', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      engines: { node: string };
    };
    const lowest = semver.minVersion(pkg.engines.node)!.version;
    const lock = JSON.parse(readFileSync(new URL('../package-lock.json', import.meta.url), 'utf8')) as {
      packages: Record<string, LockPackage>;
    };
    const refusing = Object.entries(lock.packages)
      .filter(([path, p]) => path !== '' && p.engines && !Array.isArray(p.engines) && p.engines.node)
      .filter(([, p]) => !semver.satisfies(lowest, (p.engines as { node: string }).node))
      .map(([path, p]) => `${path} (${(p.engines as { node: string }).node})`);
    expect(refusing).toEqual([]);
  });
});
