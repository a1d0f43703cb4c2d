// The Worker's settings: one start names every wrong or missing setting and binding, as Node does.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../config/config.js';
import { readWorkerSettings } from './settings.js';

const problemsOf = (env: Record<string, unknown>) => {
  try {
    readWorkerSettings(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.map((p) => p.variable);
    throw err;
  }
  return [];
};

describe('Worker settings', () => {
  it('names every required setting at once when none is set', () => {
    expect(problemsOf({})).toEqual([
      'UPSTREAM_AUTH_URL',
      'UPSTREAM_BASE_URL',
      'UPSTREAM_CLIENT_ID',
      'UPSTREAM_CLIENT_SECRET',
      'GATEWAY_TOKEN_SECRET',
      'PUBLIC_BASE_URL',
      'GATEWAY_CLIENTS',
    ]);
  });

  it('names wrong values, missing ones, Worker-only settings and bindings together', () => {
    expect(
      problemsOf({
        UPSTREAM_AUTH_URL: 'not a url',
        UPSTREAM_CLIENT_ID: 'gw',
        DEFAULT_REGION: 'XX',
        METRICS_PUSH_INTERVAL_SECONDS: '60',
        COUNTERS: 'not a namespace',
      }).sort(),
    ).toEqual(
      [
        'UPSTREAM_AUTH_URL',
        'DEFAULT_REGION',
        'UPSTREAM_BASE_URL',
        'UPSTREAM_CLIENT_SECRET',
        'GATEWAY_TOKEN_SECRET',
        'PUBLIC_BASE_URL',
        'GATEWAY_CLIENTS',
        'METRICS_PUSH_INTERVAL_SECONDS',
        'COUNTERS',
      ].sort(),
    );
  });

  it('reads the metrics push settings with their defaults', () => {
    const settings = readWorkerSettings({
      UPSTREAM_AUTH_URL: 'http://127.0.0.1:9000',
      UPSTREAM_BASE_URL: 'http://127.0.0.1:9000',
      UPSTREAM_CLIENT_ID: 'gw',
      UPSTREAM_CLIENT_SECRET: 's',
      GATEWAY_TOKEN_SECRET: 'x'.repeat(32),
      GATEWAY_CLIENTS: `crm:${'a'.repeat(64)}`,
      PUBLIC_BASE_URL: 'https://callerid.example.com',
    });
    expect([settings.metricsPushIntervalMs, settings.metricsPushMaxRequests]).toEqual([10_000, 1_000]);
  });

  it('reads the clients from GATEWAY_CLIENTS_JSON (the clients file format), naming a wrong field or a second source', () => {
    const base = {
      UPSTREAM_AUTH_URL: 'http://127.0.0.1:9000',
      UPSTREAM_BASE_URL: 'http://127.0.0.1:9000',
      UPSTREAM_CLIENT_ID: 'gw',
      UPSTREAM_CLIENT_SECRET: 's',
      GATEWAY_TOKEN_SECRET: 'x'.repeat(32),
      PUBLIC_BASE_URL: 'https://callerid.example.com',
    };
    const hash = `sha256:${'a'.repeat(64)}`;
    const json = JSON.stringify({ clients: [{ id: 'crm', secrets: [{ hash }], admin: true }] });
    expect(readWorkerSettings({ ...base, GATEWAY_CLIENTS_JSON: json }).clients).toEqual([
      { id: 'crm', secrets: [{ sha256: 'a'.repeat(64) }], admin: true },
    ]);
    expect(() =>
      readWorkerSettings({ ...base, GATEWAY_CLIENTS_JSON: JSON.stringify({ clients: [{ id: 'crm', secrets: [] }] }) }),
    ).toThrow('configuration error: GATEWAY_CLIENTS_JSON: clients[0].secrets: must list at least one secret');
    expect(problemsOf({ ...base, GATEWAY_CLIENTS_JSON: json, GATEWAY_CLIENTS: `crm:${'a'.repeat(64)}` })).toEqual([
      'GATEWAY_CLIENTS',
    ]);
    // The reader of the clients file on Node: a key given twice is refused, a syntax error quotes nothing.
    const twice = json.replace('"admin":true', '"admin":false,"admin":true');
    expect(() => readWorkerSettings({ ...base, GATEWAY_CLIENTS_JSON: twice })).toThrow(
      `configuration error: GATEWAY_CLIENTS_JSON: gives a key twice in one object (at line 1, column ${twice.lastIndexOf('"admin"') + 1})`,
    );
    expect(() => readWorkerSettings({ ...base, GATEWAY_CLIENTS_JSON: json.replace('"crm"', 'crm7f3c') })).toThrow(
      /^configuration error: GATEWAY_CLIENTS_JSON: is not JSON \(invalid symbol at line 1, column 19\)$/,
    );
  });
});
