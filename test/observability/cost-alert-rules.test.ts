// The cost-control alert rules of docs/cost-control.md are valid Prometheus rules (promtool check rules) and use metrics
// the gateway exports.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/observability/metrics.js';
import { checkRequirement, fileRequirement } from '../helpers/requires.js';

const hasPromtool = checkRequirement(fileRequirement('/usr/bin/promtool', 'promtool (Debian package prometheus)'));

function costAlertRules(): string {
  const section = readFileSync(new URL('../../docs/cost-control.md', import.meta.url), 'utf8');
  const rules = /## Alert rules[\s\S]*?```yaml\n([\s\S]*?)```/.exec(section);
  if (!rules) throw new Error('no alert rules under "## Alert rules" in docs/cost-control.md');
  return rules[1]!;
}

describe('cost-control alert rules in the docs', () => {
  it.skipIf(!hasPromtool)('pass promtool check rules', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cost-rules-'));
    const file = join(dir, 'rules.yml');
    writeFileSync(file, costAlertRules());
    const run = spawnSync('/usr/bin/promtool', ['check', 'rules', file], { encoding: 'utf8' });
    expect(run.stderr + run.stdout).toMatch(/SUCCESS: 4 rules found/);
    expect(run.status).toBe(0);
  });

  it('name only metrics the gateway exports', async () => {
    const exported = (await createMetrics({ registry: new Registry() }).registry.getMetricsAsJSON()).map((m) => m.name);
    const used = [...costAlertRules().matchAll(/callerid_gateway_\w+/g)].map((m) => m[0]);
    expect(used.length).toBeGreaterThan(0);
    for (const name of used) expect(exported, name).toContain(name);
  });
});
