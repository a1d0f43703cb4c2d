// /docs, its assets and /docs/problems over a real socket: strict CSP, assets from the gateway itself, and
// DOCS_ENABLED=false removing the reference and the document but not the problems page the answers link to.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../helpers/stack.js';

describe('docs routes', () => {
  let on: Stack;
  let off: Stack;
  beforeAll(async () => {
    [on, off] = await Promise.all([startStack(), startStack({ env: { DOCS_ENABLED: 'false' } })]);
  });
  afterAll(async () => {
    await on?.close();
    await off?.close();
  });

  it('serves the page with a CSP that allows only the gateway itself', async () => {
    const res = await fetch(`${on.gateway.url}/docs`);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    const html = await res.text();
    expect(html).not.toMatch(/<script>|<style>|\sstyle=|https?:\/\//);
    for (const src of html.match(/(?:src|href)="[^"]+"/g) ?? []) expect(src).toMatch(/="\/(docs|openapi\.json)/);
  });

  it("serves Swagger UI's files from the installed package", async () => {
    const js = await fetch(`${on.gateway.url}/docs/assets/swagger-ui-bundle.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect((await js.text()).length).toBeGreaterThan(500_000);
    const css = await fetch(`${on.gateway.url}/docs/assets/swagger-ui.css`);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    expect(await css.text()).toContain('.swagger-ui');
  });

  it('with DOCS_ENABLED=false answers 404 for /docs and /openapi.json, and still serves /docs/problems', async () => {
    for (const path of ['/docs', '/openapi.json', '/docs/assets/swagger-ui-bundle.js']) {
      const res = await fetch(`${off.gateway.url}${path}`);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
    }
    const problems = await fetch(`${off.gateway.url}/docs/problems`);
    expect(problems.status).toBe(200);
    const html = await problems.text();
    expect(html).toContain('id="quota-exhausted"');
    expect(html).not.toContain('href="/docs"');
  });
});
