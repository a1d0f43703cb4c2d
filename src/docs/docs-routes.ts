// /openapi.json (generated from the app's own routes), /docs (Swagger UI, every asset from the gateway) and
// /docs/problems (what each problem `type` means). DOCS_ENABLED=false removes the first two; the problems page
// stays, since every problem answer links to it.
import { Hono, type MiddlewareHandler } from 'hono';
import { openAPIRouteHandler } from 'hono-openapi';
import type { AppEnv } from '../http/app-env.js';
import type { Config } from '../config/config.js';
import { SWAGGER_UI_FILES, type DocsAssets } from '../base/docs-assets.js';
import { PROBLEMS_PAGE_PATH, problemResponse } from '../base/errors.js';
import {
  DOCS_ASSETS_PATH,
  DOCS_CONTENT_SECURITY_POLICY,
  DOCS_INIT_SCRIPT,
  DOCS_PATH,
  DOCS_STYLE,
  OPENAPI_PATH,
  renderDocsPage,
  renderProblemsPage,
} from './docs-page.js';
import { openApiOptions } from './openapi-document.js';

export interface DocsServices {
  config: Pick<Config, 'docs'>;
  docsAssets: DocsAssets | undefined;
}

const PAGE_HEADERS = {
  'content-security-policy': DOCS_CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
} as const;
const ASSET_CACHE = 'public, max-age=3600';

function secured(): MiddlewareHandler<AppEnv> {
  return async function docsHeaders(c, next) {
    await next();
    for (const [name, value] of Object.entries(PAGE_HEADERS)) c.res.headers.set(name, value);
  };
}

/** `app` is the whole gateway app, whose routes the document describes (read when it is first asked for). */
export function docsRoutes(services: DocsServices, app: Hono<AppEnv>): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const { config, docsAssets } = services;
  routes.use(`${DOCS_PATH}/*`, secured());
  routes.use(DOCS_PATH, secured());

  routes.get(`${DOCS_ASSETS_PATH}/docs.css`, (c) =>
    c.body(DOCS_STYLE, 200, { 'content-type': 'text/css; charset=utf-8', 'cache-control': ASSET_CACHE }),
  );
  routes.get(PROBLEMS_PAGE_PATH, (c) =>
    c.html(renderProblemsPage(config.docs.enabled), 200, { 'cache-control': ASSET_CACHE }),
  );
  if (!config.docs.enabled) return routes;

  const document = openAPIRouteHandler(app, openApiOptions());
  routes.get(OPENAPI_PATH, async (c, next) => {
    c.header('cache-control', 'no-cache');
    return document(c, next);
  });

  routes.get(DOCS_PATH, (c) =>
    docsAssets === undefined
      ? problemResponse(
          'not_found',
          `This runtime does not serve the docs page's assets; the API document is at ${OPENAPI_PATH}.`,
          c.get('requestId'),
        )
      : c.html(renderDocsPage(), 200, { 'cache-control': 'no-cache' }),
  );
  routes.get(`${DOCS_ASSETS_PATH}/docs-init.js`, (c) =>
    c.body(DOCS_INIT_SCRIPT, 200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': ASSET_CACHE }),
  );
  for (const file of SWAGGER_UI_FILES) {
    routes.get(`${DOCS_ASSETS_PATH}/${file}`, async (c) => {
      if (docsAssets === undefined)
        return problemResponse('not_found', 'This runtime does not serve the docs assets.', c.get('requestId'));
      const asset = await docsAssets.get(file);
      return c.body(asset.body, 200, { 'content-type': asset.contentType, 'cache-control': ASSET_CACHE });
    });
  }
  return routes;
}
