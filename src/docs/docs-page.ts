// The HTML of /docs (Swagger UI over /openapi.json, its assets from the gateway itself) and of /docs/problems
// (one anchor per problem type), with their own small script and stylesheet: nothing inline, nothing third-party.
import { errorCodes, problemSlug, type ErrorCode } from '../base/errors.js';
import { PROBLEM_CATALOGUE } from './problem-catalogue.js';

export const DOCS_PATH = '/docs';
export const DOCS_ASSETS_PATH = '/docs/assets';
export const OPENAPI_PATH = '/openapi.json';

export const DOCS_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  // Swagger UI's stylesheet draws its icons as data: URIs.
  "img-src 'self' data:",
  // The document and "Try it out" calls go to this gateway only.
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Starts Swagger UI on the document of the gateway that served the page (no validator badge: it calls a third party). */
export const DOCS_INIT_SCRIPT = `'use strict';
window.addEventListener('DOMContentLoaded', function () {
  window.ui = SwaggerUIBundle({
    url: new URL(${JSON.stringify(OPENAPI_PATH)}, window.location.href).href,
    dom_id: '#swagger-ui',
    validatorUrl: null,
    deepLinking: true,
    tryItOutEnabled: true,
    displayRequestDuration: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
});
`;

export const DOCS_STYLE = `
body { margin: 0; font-family: system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif; color: #1b2330; background: #fff; }
/* The bar's links wrap onto a second line on a phone (390 px) instead of widening the page past the screen. */
.docs-bar { background: #14233a; color: #fff; padding: .8rem 1.5rem; display: flex; flex-wrap: wrap; gap: .4rem 1.5rem; align-items: baseline; }
.docs-bar a { color: #cdd7e6; }
.docs-bar strong { font-size: 1.1rem; }
.problems { max-width: 60rem; margin: 0 auto; padding: 1.5rem; line-height: 1.5; overflow-wrap: anywhere; }
.problems section { border-top: 1px solid #d9dfe7; padding: .75rem 0; }
.problems section:target { background: #fff7d6; }
.problems h2 { font-size: 1.15rem; margin: .25rem 0; }
.problems .status { color: #5b6677; font-weight: normal; }
.problems code { background: #eef1f5; border-radius: 4px; padding: 0 .25rem; }
@media (max-width: 30rem) { .docs-bar { padding: .7rem 1rem; column-gap: 1rem; } .problems { padding: 1rem; } }
`;

const escapeHtml = (text: string) =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
/** Catalogue text: escaped, with `backticks` as code. */
const prose = (text: string) => escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');

const head = (title: string, styles: string[]) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
  `<title>${escapeHtml(title)}</title>${styles.map((href) => `<link rel="stylesheet" href="${href}">`).join('')}</head>`;

const bar = (docsEnabled: boolean) =>
  `<header class="docs-bar"><strong>callerid-gateway</strong>` +
  (docsEnabled ? `<a href="${DOCS_PATH}">API reference</a><a href="${OPENAPI_PATH}">openapi.json</a>` : '') +
  `<a href="${DOCS_PATH}/problems">Problem types</a></header>`;

export function renderDocsPage(): string {
  return (
    head('callerid-gateway API reference', [`${DOCS_ASSETS_PATH}/swagger-ui.css`, `${DOCS_ASSETS_PATH}/docs.css`]) +
    `<body>${bar(true)}<main id="swagger-ui"></main>` +
    `<script src="${DOCS_ASSETS_PATH}/swagger-ui-bundle.js"></script><script src="${DOCS_ASSETS_PATH}/docs-init.js"></script></body></html>`
  );
}

export function renderProblemsPage(docsEnabled: boolean): string {
  const sections = (Object.keys(PROBLEM_CATALOGUE) as ErrorCode[])
    .sort((a, b) => errorCodes[a].status - errorCodes[b].status || a.localeCompare(b))
    .map((code) => {
      const entry = PROBLEM_CATALOGUE[code];
      const { status, title } = errorCodes[code];
      return (
        `<section id="${problemSlug(code)}"><h2>${escapeHtml(title)} <span class="status">${status} · <code>${problemSlug(code)}</code></span></h2>` +
        `<p><strong>When:</strong> ${prose(entry.when)}</p><p><strong>What to do:</strong> ${prose(entry.action)}</p>` +
        (entry.headers ? `<p><strong>Headers:</strong> ${prose(entry.headers)}</p>` : '') +
        `</section>`
      );
    })
    .join('');
  return (
    head('callerid-gateway problem types', [`${DOCS_ASSETS_PATH}/docs.css`]) +
    `<body>${bar(docsEnabled)}<main class="problems"><h1>Problem types</h1>` +
    `<p>Every error of the gateway is <code>application/problem+json</code> (RFC 9457) with <code>type</code>, <code>title</code>, ` +
    `<code>status</code>, <code>detail</code> and <code>requestId</code>. Its <code>type</code> is a link to its entry here, e.g. ` +
    `<code>/docs/problems#quota-exhausted</code>.</p>${sections}</main></body></html>`
  );
}
