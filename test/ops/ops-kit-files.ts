// Reads the operators' kit in config/ for the tests: the dashboard's PromQL (with Grafana's variables put in
// as Grafana would), the alert rules, and the docs' alert blocks.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

export const CONFIG_DIR = fileURLToPath(new URL('../../config/', import.meta.url));
export const ALERTS_FILE = `${CONFIG_DIR}prometheus/alerts.yml`;
export const ALERT_TESTS_FILE = `${CONFIG_DIR}prometheus/alerts.test.yml`;
const DASHBOARD_FILE = `${CONFIG_DIR}grafana/callerid-gateway.json`;

export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface DashboardTarget {
  panel: string;
  refId: string;
  expr: string;
}

interface Panel {
  id: number;
  type: string;
  title: string;
  targets?: { refId: string; expr: string }[];
}

export function readDashboard(): {
  uid: string;
  panels: Panel[];
  templating: { list: { name: string; allValue?: string }[] };
} {
  return JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8'));
}

/**
 * Grafana's variables as Grafana fills them: `$instance` with its "All" value (`.*`); `$__rate_interval` with
 * a window of several scrape intervals (Grafana takes at least four; the test scrapes every second and sends
 * its traffic within the last 30 s); `$__range` with the last minute.
 */
const GRAFANA_VARIABLES: Record<string, string> = {
  $__rate_interval: '30s',
  $__range: '1m',
  $instance: '.*',
};

export function substituteGrafanaVariables(expr: string): string {
  let out = expr;
  for (const [name, value] of Object.entries(GRAFANA_VARIABLES)) out = out.replaceAll(name, value);
  if (out.includes('$')) throw new Error(`an unknown Grafana variable is left in: ${out}`);
  return out;
}

export function dashboardTargets(): DashboardTarget[] {
  return readDashboard()
    .panels.filter((p) => p.type !== 'row')
    .flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, refId: t.refId, expr: t.expr })));
}

export function readAlertRules(file = ALERTS_FILE): AlertRule[] {
  const doc = parse(readFileSync(file, 'utf8')) as { groups: { rules: AlertRule[] }[] };
  return doc.groups.flatMap((g) => g.rules);
}

/** Every ```yaml block of the docs that holds alert rules (docs/operations.md, docs/cost-control.md). */
export function docsAlertRules(): AlertRule[] {
  const docs = ['operations', 'cost-control']
    .map((name) => readFileSync(new URL(`../../docs/${name}.md`, import.meta.url), 'utf8'))
    .join('\n');
  return [...docs.matchAll(/```yaml\n([\s\S]*?)```/g)]
    .map((m) => parse(m[1]!) as { groups?: { rules: AlertRule[] }[] })
    .filter((doc) => doc && Array.isArray(doc.groups))
    .flatMap((doc) => doc.groups!.flatMap((g) => g.rules));
}
