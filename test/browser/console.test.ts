import { chromium, type Browser, type BrowserContextOptions, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PHONES, TABLETS } from '../helpers/user-agents.js';
import { checkRequirement, fileRequirement } from '../helpers/requires.js';
import { startStack, type Stack } from '../helpers/stack.js';

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = checkRequirement(
  fileRequirement(CHROMIUM, `Chromium at ${CHROMIUM} (apt-get install -y chromium)`),
);
// Screenshots are for looking at, never for the repository.
const SHOTS = '/tmp/callerid-console-screenshots';

describe.skipIf(!hasChromium)('console in Chromium', () => {
  let browser: Browser;
  let stack: Stack;
  let limited: Stack;

  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
    stack = await startStack({
      env: { CONSOLE_PROVIDER: 'swissdir', CONSOLE_RATE_PER_ADDRESS: '1000', CONSOLE_RATE_TOTAL: '10000' },
    });
    limited = await startStack({ env: { CONSOLE_PROVIDER: 'swissdir', CONSOLE_RATE_PER_ADDRESS: '2' } });
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    await limited?.close();
  });

  async function open(
    base: string,
    options: BrowserContextOptions,
  ): Promise<{ page: Page; cspViolations: string[]; close(): Promise<void> }> {
    const context = await browser.newContext(options);
    const page = await context.newPage();
    const cspViolations: string[] = [];
    page.on('console', (msg) => {
      if (/Content Security Policy/i.test(msg.text())) cspViolations.push(msg.text());
    });
    await page.goto(`${base}/console`);
    return { page, cspViolations, close: () => context.close() };
  }

  async function searchByKeyboard(page: Page, what: string): Promise<void> {
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('what');
    await page.keyboard.type(what);
    await page.keyboard.press('Enter');
  }

  it.each([
    ['desktop 1280x800', { viewport: { width: 1280, height: 800 } }],
    ['tablet 768x1024', { viewport: { width: 768, height: 1024 }, userAgent: TABLETS.galaxyTab }],
  ] as const)('shows the provider’s cards for a national-format search (%s)', async (name, options) => {
    const { page, cspViolations, close } = await open(stack.gateway.url, options);
    try {
      await expect(page.getByLabel('Telephone number')).toBeTruthy();
      await searchByKeyboard(page, '020 7946 0010');
      const cards = page.locator('#results .card');
      await cards.first().waitFor();
      expect(await cards.count()).toBe(1);
      const text = await cards.first().innerText();
      expect(text).toContain('Café Zoë');
      expect(text).toMatch(/organisation/i);
      expect(text).toContain('2 Lantern Row');
      expect(text).toContain('020 7946 0010');
      expect(text).toContain('SwissDir');
      expect(await page.locator('#results').innerText()).not.toMatch(/OpenBook|CityLines/);
      expect(await page.locator('#request-line').innerText()).toBe('GET /v2/contacts/search?what=020%207946%200010');
      expect(await page.locator('#raw-json').textContent()).toContain('"total": 1');
      expect(await page.locator('#status').innerText()).toContain('1 entry found');
      await page.locator('#raw').evaluate((d) => ((d as HTMLDetailsElement).open = true));
      await page.screenshot({ path: `${SHOTS}/${name.split(' ')[0]}-results.png`, fullPage: true });
      expect(cspViolations).toEqual([]);
    } finally {
      await close();
    }
  });

  it('shows the refusal on a phone (390x844, iPhone)', async () => {
    const { page, close } = await open(stack.gateway.url, {
      viewport: { width: 390, height: 844 },
      userAgent: PHONES.iPhone,
      isMobile: true,
      hasTouch: true,
    });
    try {
      await expect(
        page.getByRole('heading', { name: 'Available on tablets and larger devices' }).isVisible(),
      ).resolves.toBe(true);
      expect(await page.locator('#what').count()).toBe(0);
      await page.screenshot({ path: `${SHOTS}/phone-refusal.png`, fullPage: true });
    } finally {
      await close();
    }
  });

  it('asks for a wider window below 768 CSS px', async () => {
    const { page, close } = await open(stack.gateway.url, { viewport: { width: 700, height: 900 } });
    try {
      expect(await page.getByRole('heading', { name: 'Please use a larger screen' }).isVisible()).toBe(true);
      expect(await page.locator('#what').isVisible()).toBe(false);
      await page.screenshot({ path: `${SHOTS}/narrow-window.png` });
    } finally {
      await close();
    }
  });

  it('explains "no listing", an invalid number and an upstream failure', async () => {
    const { page, close } = await open(stack.gateway.url, { viewport: { width: 1280, height: 800 } });
    const status = page.locator('#status');
    try {
      await searchByKeyboard(page, '020 7946 0003');
      await status.filter({ hasText: 'No listing' }).waitFor();
      expect(await page.locator('#results .card').count()).toBe(0);
      await page.screenshot({ path: `${SHOTS}/no-listing.png` });

      await page.locator('#what').fill('not a number');
      await page.locator('#what').press('Enter');
      await status.filter({ hasText: 'not a possible telephone number' }).waitFor();
      await page.screenshot({ path: `${SHOTS}/invalid-number.png` });

      stack.simulator.controls.setFaults({ errorRate: 1 });
      await page.locator('#what').fill('0113 496 0013');
      await page.locator('#what').press('Enter');
      await status.filter({ hasText: 'not answering right now' }).waitFor();
      await page.screenshot({ path: `${SHOTS}/upstream-failure.png` });
    } finally {
      stack.simulator.controls.setFaults({ errorRate: 0 });
      await close();
    }
  });

  it('shows "too many requests, try again in N s" after the limit', async () => {
    const { page, close } = await open(limited.gateway.url, { viewport: { width: 1280, height: 800 } });
    try {
      await searchByKeyboard(page, '020 7946 0001');
      await page.locator('#results .card').first().waitFor();
      for (const what of ['020 7946 0002', '020 7946 0004']) {
        await page.locator('#what').fill(what);
        await page.locator('#what').press('Enter');
        await page.locator('#status').filter({ hasNotText: 'Searching' }).waitFor();
      }
      const message = page.locator('#status').filter({ hasText: 'Too many requests' });
      await message.waitFor();
      expect(await message.innerText()).toMatch(/Try again in \d+ s\./);
      expect(await page.locator('#search-button').isDisabled()).toBe(true);
      await page.screenshot({ path: `${SHOTS}/rate-limited.png` });
    } finally {
      await close();
    }
  });

  it('loads without a single 404 (the icon is the console’s own, not /favicon.ico)', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const answers: string[] = [];
    page.on('response', (res) => answers.push(`${res.status()} ${new URL(res.url()).pathname}`));
    try {
      await page.goto(`${stack.gateway.url}/console`);
      await page.waitForLoadState('networkidle');
      expect(answers.filter((a) => a.startsWith('404'))).toEqual([]);
      expect(answers).toContain('200 /console/favicon.svg');
    } finally {
      await context.close();
    }
  });

  it('counts down once: the message and the quota line show the same seconds while rate limited', async () => {
    const { page, close } = await open(limited.gateway.url, { viewport: { width: 1280, height: 800 } });
    const secondsIn = async (selector: string) =>
      Number(/(\d+) s\b/.exec(await page.locator(selector).innerText())?.[1]);
    try {
      for (const what of ['020 7946 0001', '020 7946 0002', '020 7946 0004']) {
        await page.locator('#what').fill(what);
        await page.locator('#what').press('Enter');
        await page.locator('#status').filter({ hasNotText: 'Searching' }).waitFor();
      }
      await page.locator('#status').filter({ hasText: 'Too many requests' }).waitFor();
      for (let i = 0; i < 2; i++) {
        const [status, quota] = await page.evaluate(() => [
          document.getElementById('status')!.innerText,
          document.getElementById('quota')!.innerText,
        ]);
        const inStatus = Number(/(\d+) s\b/.exec(status)?.[1]);
        const inQuota = Number(/(\d+) s\b/.exec(quota)?.[1]);
        expect(inStatus).toBeGreaterThan(0);
        expect(inQuota).toBe(inStatus);
        await page.waitForTimeout(1100);
      }
      expect(await secondsIn('#status')).toBeGreaterThan(0);
    } finally {
      await close();
    }
  });

  it('suggests, in the hint after an impossible number, spellings of the configured region (CH)', async () => {
    const swiss = await startStack({ env: { CONSOLE_PROVIDER: 'swissdir', DEFAULT_REGION: 'CH' } });
    const { page, close } = await open(swiss.gateway.url, { viewport: { width: 1280, height: 800 } });
    try {
      await page.locator('#what').fill('not a number');
      await page.locator('#what').press('Enter');
      const status = page.locator('#status').filter({ hasText: 'not a possible telephone number' });
      await status.waitFor();
      const main = page.locator('main');
      const international = await main.getAttribute('data-example-international');
      expect(international).toMatch(/^\+41 /);
      expect(await status.innerText()).toContain(international!);
      expect(await status.innerText()).not.toContain('7946');
    } finally {
      await close();
      await swiss.close();
    }
  });
});
