// The docs page in real Chromium: Swagger UI renders the gateway's OpenAPI document with every asset from the
// gateway itself (strict CSP, no request leaves 127.0.0.1), and a developer logs in (pasting a token, or with a
// client id and secret through "Authorize") and searches from it.
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkRequirement, fileRequirement } from '../helpers/requires.js';
import { CLIENTS, startStack, type Stack } from '../helpers/stack.js';

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = checkRequirement(
  fileRequirement(CHROMIUM, `Chromium at ${CHROMIUM} (apt-get install -y chromium)`),
);
const SHOTS = '/tmp/callerid-docs-screenshots';

describe.skipIf(!hasChromium)('docs page in Chromium', () => {
  let browser: Browser;
  let stack: Stack;

  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
    stack = await startStack({ env: { CONSOLE_PROVIDER: 'swissdir' } });
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  async function open(
    path: string,
    viewport = { width: 1280, height: 900 },
  ): Promise<{ page: Page; requests: string[]; problems: string[]; close(): Promise<void> }> {
    const context = await browser.newContext({ viewport });
    const page = await context.newPage();
    const requests: string[] = [];
    const problems: string[] = [];
    page.on('request', (req) => requests.push(req.url()));
    page.on('console', (msg) => {
      if (/Content Security Policy|Refused to/i.test(msg.text())) problems.push(msg.text());
    });
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    await page.goto(`${stack.gateway.url}${path}`);
    return { page, requests, problems, close: () => context.close() };
  }

  const offHost = (requests: string[]) =>
    requests.filter((url) => !url.startsWith('data:') && new URL(url).hostname !== '127.0.0.1');

  it('renders every operation of the document from the gateway alone, under its CSP', async () => {
    const { page, requests, problems, close } = await open('/docs');
    try {
      await page.locator('.opblock').first().waitFor({ timeout: 60_000 });
      const doc = (await (await fetch(`${stack.gateway.url}/openapi.json`)).json()) as {
        paths: Record<string, object>;
      };
      const operations = Object.values(doc.paths).reduce((n, ops) => n + Object.keys(ops).length, 0);
      expect(await page.locator('.opblock').count()).toBe(operations);
      const text = await page.locator('#swagger-ui').innerText();
      for (const path of Object.keys(doc.paths)) expect(text).toContain(path);
      await page.screenshot({ path: `${SHOTS}/docs.png`, fullPage: false });
      expect(problems).toEqual([]);
      expect(requests.some((u) => u.endsWith('/openapi.json'))).toBe(true);
      expect(offHost(requests)).toEqual([]);
    } finally {
      await close();
    }
  });

  it('lets a developer obtain a token and search with it from the page', async () => {
    const { page, requests, problems, close } = await open('/docs');
    try {
      // POST /token/login, tried out from the page.
      const login = page.locator('#operations-Token-tokenLogin');
      await login.locator('.opblock-summary').click();
      const field = (name: string) =>
        login.locator(`tr[data-property-name="${name}"] input, tr[data-property-name="${name}"] select`).first();
      await field('grant_type').selectOption('client_credentials');
      await field('client_id').fill('crm');
      await field('client_secret').fill(CLIENTS.crm);
      await login.locator('button.execute').click();
      const loginBody = login.locator('.live-responses-table .response-col_description pre').first();
      await loginBody.waitFor();
      const token = JSON.parse(await loginBody.innerText()).access_token as string;
      expect(token).toMatch(/^ey/);

      // Authorize with it, then GET /v2/contacts/search.
      await page.locator('.auth-wrapper .authorize').click();
      const gatewayAuth = page.locator('.auth-container').filter({ hasText: 'gatewayToken' });
      await gatewayAuth.locator('input').fill(token);
      await gatewayAuth.locator('button.authorize').click();
      await gatewayAuth.locator('.btn-done').click();

      const search = page.locator('#operations-Contacts-searchContacts');
      await search.locator('.opblock-summary').click();
      await search.locator('tr[data-param-name="what"] input').fill('020 7946 0001');
      await search.locator('button.execute').click();
      const status = search.locator('.live-responses-table .response .response-col_status').first();
      await status.waitFor();
      expect((await status.innerText()).trim()).toBe('200');
      const body = JSON.parse(
        await search.locator('.live-responses-table .response-col_description pre').first().innerText(),
      );
      expect(body.results.length).toBeGreaterThan(0);
      await page.screenshot({ path: `${SHOTS}/docs-search.png`, fullPage: false });
      expect(problems).toEqual([]);
      expect(offHost(requests)).toEqual([]);
    } finally {
      await close();
    }
  });

  it('lets a developer log in from "Authorize" with a client id and secret (client credentials at /oauth2/token), then search', async () => {
    const { page, requests, problems, close } = await open('/docs');
    try {
      await page.locator('.opblock').first().waitFor({ timeout: 60_000 });
      await page.locator('.auth-wrapper .authorize').click();
      const oauth = page.locator('.auth-container').filter({ hasText: 'oauthClientCredentials' });
      await oauth.locator('input[id^="client_id"]').fill('crm');
      await oauth.locator('input[id^="client_secret"]').fill(CLIENTS.crm);
      const token = page.waitForResponse((res) => new URL(res.url()).pathname === '/oauth2/token');
      await oauth.locator('button.authorize').click();
      expect((await token).status()).toBe(200);
      await oauth.locator('button.btn-done').click();

      const search = page.locator('#operations-Contacts-searchContacts');
      await search.locator('.opblock-summary').click();
      await search.click({ trial: true }).catch(() => undefined);
      await search.locator('tr[data-param-name="what"] input').fill('020 7946 0001');
      await search.locator('button.execute').click();
      const status = search.locator('.live-responses-table .response .response-col_status').first();
      await status.waitFor();
      expect((await status.innerText()).trim()).toBe('200');
      expect(problems).toEqual([]);
      expect(offHost(requests)).toEqual([]);
    } finally {
      await close();
    }
  });

  it('shows each problem type at its anchor, as the type URIs of the answers point', async () => {
    const res = await fetch(`${stack.gateway.url}/v2/contacts/search?what=12`, {
      headers: { authorization: `Bearer ${await stack.login()}` },
    });
    const type = ((await res.json()) as { type: string }).type;
    expect(type).toBe('/docs/problems#invalid-number');
    const { page, requests, problems, close } = await open(type);
    try {
      const entry = page.locator('section:target');
      await entry.waitFor();
      expect(await entry.innerText()).toMatch(/Not a possible phone number[\s\S]*400/);
      expect(problems).toEqual([]);
      expect(offHost(requests)).toEqual([]);
    } finally {
      await close();
    }
  });

  // An iPhone 12-15's CSS width: the page must fit it, nothing to scroll sideways, the bar's links included.
  const PHONE = { width: 390, height: 844 };

  it.each(['/docs', '/docs/problems'])('fits a phone 390 px wide: %s is no wider than the screen', async (path) => {
    const { page, problems, close } = await open(path, PHONE);
    try {
      if (path === '/docs') await page.locator('.opblock').first().waitFor({ timeout: 60_000 });
      const width = await page.evaluate(() =>
        Math.max(document.documentElement.scrollWidth, document.body.scrollWidth),
      );
      expect(width).toBeLessThanOrEqual(PHONE.width);
      // Every link of the bar inside the screen, "Problem types" the last of them.
      for (const link of await page.locator('.docs-bar a').all()) {
        const box = (await link.boundingBox())!;
        expect(box.x + box.width, await link.innerText()).toBeLessThanOrEqual(PHONE.width);
      }
      await page.screenshot({ path: `${SHOTS}/phone${path.replaceAll('/', '-')}.png`, fullPage: false });
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });
});
