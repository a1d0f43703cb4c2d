// Configuration has one source, the schema in src/config/config.ts (and the Worker's own few settings): every file that
// names settings for people (the docs' table, config/example.env, the Kubernetes configmap, wrangler.toml's
// [vars]) names only real settings, the docs' table names every one, and the docs list every name no longer read.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { RETIRED_SETTINGS, SETTING_NAMES } from '../../src/config/config.js';
import { WORKER_SETTING_NAMES } from '../../src/runtime/workers/settings.js';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const KNOWN = new Set([...SETTING_NAMES, ...WORKER_SETTING_NAMES]);

/** The backticked names in the first column of docs/configuration.md's tables (`PORT`, `HOST` is two). */
function documentedNames(): string[] {
  return read('docs/configuration.md')
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .flatMap((line) => [...line.split('|')[1]!.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]!));
}

describe('configuration sources', () => {
  it('documents every setting in docs/configuration.md, and nothing that is not one', () => {
    const documented = new Set(documentedNames());
    expect([...KNOWN].filter((name) => !documented.has(name))).toEqual([]);
    expect([...documented].filter((name) => !KNOWN.has(name))).toEqual([]);
  });

  it('lists every name no longer read, and only those, under "Names no longer read"', () => {
    const section = /^## Names no longer read\n([\s\S]*?)(?=^## |^Every setting)/m.exec(
      read('docs/configuration.md'),
    )![1]!;
    // Each item names its old settings before the first ': ' (an item may wrap onto the next line).
    const listed = section
      .split(/^- /m)
      .slice(1)
      .flatMap((item) => [...item.split(': ', 1)[0]!.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]!));
    expect(listed.sort()).toEqual(Object.keys(RETIRED_SETTINGS).sort());
  });

  it('names only real settings in config/example.env (set or commented out)', () => {
    const names = [...read('config/example.env').matchAll(/^#?\s*([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]!);
    expect(names.length).toBeGreaterThan(20);
    expect(names.filter((name) => !KNOWN.has(name))).toEqual([]);
  });

  it('names only real settings in the Kubernetes configmap', () => {
    const data = (parse(read('config/k8s/configmap.yaml')) as { data: Record<string, string> }).data;
    expect(Object.keys(data).length).toBeGreaterThan(5);
    expect(Object.keys(data).filter((name) => !KNOWN.has(name))).toEqual([]);
  });

  it("names only real settings in wrangler.toml's [vars]", () => {
    const vars = /^\[vars\]\n([\s\S]*?)(?=^\[)/m.exec(read('wrangler.toml'))![1]!;
    const names = [...vars.matchAll(/^([A-Z][A-Z0-9_]+)\s*=/gm)].map((m) => m[1]!);
    expect(names.length).toBeGreaterThan(0);
    expect(names.filter((name) => !KNOWN.has(name))).toEqual([]);
  });
});
