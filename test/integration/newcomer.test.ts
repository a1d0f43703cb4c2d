// What a newcomer tripped over: the console's provider named as people write it, examples of the configured
// region, error texts that agree with their titles, a favicon, and an `event` on every log line.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleSearch, DESKTOP_HEADERS } from '../helpers/console-client.js';
import { startStack, type Stack } from '../helpers/stack.js';

interface SearchBody {
  total: number;
  results: { provider: { id: string } }[];
}

async function consolePage(stack: Stack): Promise<string> {
  return (await fetch(`${stack.gateway.url}/console`, { headers: DESKTOP_HEADERS })).text();
}

describe('CONSOLE_PROVIDER as people write it', () => {
  let byName: Stack;
  let unknown: Stack;

  beforeAll(async () => {
    byName = await startStack({ env: { CONSOLE_PROVIDER: 'SwissDir', CONSOLE_RATE_PER_ADDRESS: '1000' } });
    unknown = await startStack({ env: { CONSOLE_PROVIDER: 'NoSuchDirectory', CONSOLE_RATE_PER_ADDRESS: '1000' } });
  });
  afterAll(async () => {
    await byName.close();
    await unknown.close();
  });

  it('accepts the provider’s name as people write it (CONSOLE_PROVIDER=SwissDir; the id is swissdir)', async () => {
    const body = (await (await consoleSearch(byName.gateway.url, '020 7946 0001')).json()) as SearchBody;
    expect(body.results.map((r) => r.provider.id)).toEqual(['swissdir']);
    expect(body.total).toBe(1);
  });

  it('logs a warning naming the providers seen when an answer holds others but none of the configured one', async () => {
    const body = (await (await consoleSearch(unknown.gateway.url, '020 7946 0001')).json()) as SearchBody;
    expect(body.total).toBe(0);
    const warning = unknown.logs.find((l) => l.fields.event === 'console_provider_not_in_answer');
    expect(warning).toMatchObject({
      level: 'warn',
      fields: { provider: 'NoSuchDirectory', providersSeen: ['swissdir', 'openbook'] },
    });
    expect(JSON.stringify(warning)).not.toContain('7946');
  });
});

describe('console examples follow DEFAULT_REGION', () => {
  let ch: Stack;
  let gb: Stack;

  beforeAll(async () => {
    ch = await startStack({
      env: { CONSOLE_PROVIDER: 'swissdir', DEFAULT_REGION: 'CH', CONSOLE_RATE_PER_ADDRESS: '1000' },
    });
    gb = await startStack({ env: { CONSOLE_PROVIDER: 'swissdir', CONSOLE_RATE_PER_ADDRESS: '1000' } });
  });
  afterAll(async () => {
    await ch.close();
    await gb.close();
  });

  it('suggests Swiss examples with DEFAULT_REGION=CH, and the console accepts them', async () => {
    const html = await consolePage(ch);
    expect(html).not.toContain('020 7946');
    expect(html).not.toContain('+44');
    const national = /data-example-national="([^"]+)"/.exec(html)?.[1];
    const international = /data-example-international="([^"]+)"/.exec(html)?.[1];
    expect(international).toMatch(/^\+41 /);
    expect(national).toMatch(/^0\d/);
    expect(html).toContain(`<code>${international}</code>`);
    expect(html).toContain(`placeholder="e.g. ${national}"`);
    for (const example of [national!, international!])
      expect((await consoleSearch(ch.gateway.url, example)).status).toBe(200);
  });

  it('keeps the fictional drama numbers of the demo directory with DEFAULT_REGION=GB', async () => {
    const html = await consolePage(gb);
    expect(html).toContain('<code>+44 20 7946 0001</code>');
    expect(html).toContain('placeholder="e.g. 020 7946 0001"');
  });
});

describe('error texts, favicon and log events', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ env: { CONSOLE_PROVIDER: 'swissdir', CONSOLE_RATE_PER_ADDRESS: '1000' } });
  });
  afterAll(async () => {
    await stack.close();
  });

  it('titles a missing `what` as a bad request, not as an impossible number', async () => {
    const token = await stack.login();
    for (const res of [
      await fetch(`${stack.gateway.url}/v2/contacts/search`, { headers: { authorization: `Bearer ${token}` } }),
      await fetch(`${stack.gateway.url}/console/v2/contacts/search`, { headers: DESKTOP_HEADERS }),
    ]) {
      const body = (await res.json()) as { title: string; detail: string };
      expect(res.status).toBe(400);
      expect(body.title).toBe('Bad request');
      expect(body.detail).toBe('The query parameter "what" is required.');
    }
  });

  it('speaks of the path, not of a `what` parameter, when the purge route gets an impossible number', async () => {
    const token = await stack.login('ops');
    const res = await fetch(`${stack.gateway.url}/admin/cache/not-a-number`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${token}` },
    });
    const body = (await res.json()) as { title: string; detail: string };
    expect(res.status).toBe(400);
    expect(body.title).toBe('Not a possible phone number');
    expect(body.detail).not.toContain('what');
    expect(body.detail).toMatch(/path/);
  });

  it('links an icon the console serves itself, so browsers do not ask for /favicon.ico', async () => {
    const html = await consolePage(stack);
    const href = /<link rel="icon" href="([^"]+)"/.exec(html)?.[1];
    expect(href).toBe('/console/favicon.svg');
    const icon = await fetch(`${stack.gateway.url}${href}`, { headers: DESKTOP_HEADERS });
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toBe('image/svg+xml');
    expect(await icon.text()).toMatch(/^<svg/);
  });

  it('writes an `event` on every log line, errors included', async () => {
    stack.simulator.controls.setFaults({ errorRate: 1 });
    const token = await stack.login();
    await (await stack.search('0113 496 0099', token)).text();
    stack.simulator.controls.setFaults({ errorRate: 0 });
    await (
      await fetch(`${stack.gateway.url}/token/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=client_credentials&client_id=crm&client_secret=x',
      })
    ).text();
    expect(
      stack.logs.some((l) => l.level === 'warn' && l.fields.status === undefined && /request failed/.test(l.msg)),
    ).toBe(true);
    const without = stack.logs.filter((l) => typeof l.fields.event !== 'string' || l.fields.event === '');
    expect(without).toEqual([]);
  });
});
