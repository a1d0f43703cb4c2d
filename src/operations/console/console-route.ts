// The anonymous console: its page, its own script and style, and the one search it allows, under /console.
import { Hono, type MiddlewareHandler } from 'hono';
import type { AppEnv } from '../../http/app-env.js';
import { consoleDocs } from './console-docs.js';
import { problemResponse } from '../../base/errors.js';
import { requestOf } from '../../http/request-of.js';
import { PRIVATE_ANSWER } from '../search/search-json.js';
import type { Services } from '../../services/services.js';
import { CONSOLE_SCRIPT, CONSOLE_STYLE } from './console-assets.js';
import { isPhone } from './device.js';
import { consoleExamples } from './examples.js';
import { CONSOLE_ICON, ICON_PATH } from './icon.js';
import { filterToProvider } from './provider-filter.js';
import { UPSTREAM_BODY } from '../../upstream/search-client.js';
import { renderConsolePage, renderPhoneRefusal, SCRIPT_PATH, STYLE_PATH } from './console-page.js';

const CONSOLE_PAGE_PATH = '/console';
const CONSOLE_SEARCH_PATH = '/console/v2/contacts/search';

const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Every path the console answers; anything else under /console is 404, any other method 405. */
const ROUTES = new Map<string, 'page' | 'search' | 'asset'>([
  [CONSOLE_PAGE_PATH, 'page'],
  [CONSOLE_SEARCH_PATH, 'search'],
  [SCRIPT_PATH, 'asset'],
  [STYLE_PATH, 'asset'],
  [ICON_PATH, 'asset'],
]);

export type ConsoleServices = Pick<
  Services,
  'config' | 'search' | 'peerAddress' | 'addressOf' | 'telemetry' | 'consoleLimiter' | 'logger' | 'clock'
>;

/** While the configured provider was never matched, a warning at most this often (a typo would flood the log). */
const PROVIDER_WARNING_EVERY_MS = 10 * 60_000;

export function consoleRoutes(services: ConsoleServices): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { config } = services;
  const provider = config.console.provider;
  // Console off: nothing is registered, so /console is the gateway's ordinary 404.
  if (provider === undefined) return app;

  app.use('/console/*', consoleGuard(services, provider));
  const examples = consoleExamples(config.defaultRegion);
  let providerMatched = false;
  let lastProviderWarning = -Infinity;
  const warnProviderUnmatched = (providersSeen: string[]) => {
    if (services.clock() - lastProviderWarning < PROVIDER_WARNING_EVERY_MS) return;
    lastProviderWarning = services.clock();
    services.logger.warn(
      { event: 'console_provider_not_in_answer', provider, providersSeen, providerPath: UPSTREAM_BODY.providerPath },
      'CONSOLE_PROVIDER matched no result of an answer that holds other providers; check its spelling (the provider id or name)',
    );
  };

  app.get(CONSOLE_PAGE_PATH, consoleDocs.consolePage, (c) =>
    c.html(
      renderConsolePage({
        provider,
        resultsPath: UPSTREAM_BODY.resultsPath,
        perAddress: config.console.rate.perAddress,
        windowSeconds: config.console.rate.windowSeconds,
        examples,
      }),
      200,
      { 'cache-control': 'no-store' },
    ),
  );
  app.get(SCRIPT_PATH, (c) =>
    c.body(CONSOLE_SCRIPT, 200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-cache' }),
  );
  app.get(STYLE_PATH, (c) =>
    c.body(CONSOLE_STYLE, 200, { 'content-type': 'text/css; charset=utf-8', 'cache-control': 'no-cache' }),
  );
  app.get(ICON_PATH, (c) =>
    c.body(CONSOLE_ICON, 200, { 'content-type': 'image/svg+xml', 'cache-control': 'public, max-age=86400' }),
  );

  app.get(CONSOLE_SEARCH_PATH, consoleDocs.consoleSearch, async (c) => {
    const request = requestOf(c, services.peerAddress);
    const input = {
      target: c.req.url,
      prefer: c.req.header('prefer'),
      requestId: c.get('requestId'),
      span: c.get('span'),
    };
    const outcome = await services.search.byConsole(request, input);
    if (outcome.lookup !== undefined) c.set('lookup', outcome.lookup);
    if ('refused' in outcome) {
      const { code, message, headers } = outcome.refused;
      return problemResponse(code, message, input.requestId, { ...outcome.rateHeaders, ...headers });
    }
    const filtered = filterToProvider(outcome.found.body, { provider, ...UPSTREAM_BODY });
    // An answer with other providers but never the configured one: most likely CONSOLE_PROVIDER names no provider.
    if (filtered.kept > 0) providerMatched = true;
    else if (!providerMatched && filtered.otherProviders.length > 0) warnProviderUnmatched(filtered.otherProviders);
    // No Cache-Status or Age (the guard removes them from every console answer): they would tell an anonymous
    // visitor that someone looked the number up a moment ago, and (by the ttl of a positive or negative entry)
    // whether providers it must hide list the number.
    return c.body(filtered.body, 200, {
      ...outcome.rateHeaders,
      'content-type': 'application/json; charset=utf-8',
      'cache-control': PRIVATE_ANSWER,
    });
  });

  return app;
}

function consoleGuard(services: ConsoleServices, provider: string): MiddlewareHandler<AppEnv> {
  const { telemetry, consoleLimiter } = services;

  return async function consoleGuard(c, next) {
    const requestId = c.get('requestId');
    const kind = ROUTES.get(c.req.path);
    let response: Response | undefined;

    if (kind === undefined) {
      telemetry.consoleRefused('not_allowed');
      response = problemResponse(
        'not_found',
        'The console offers only its page and GET /console/v2/contacts/search.',
        requestId,
      );
    } else if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
      telemetry.consoleRefused('not_allowed');
      response = problemResponse('method_not_allowed', 'Use GET, HEAD on this path.', requestId, {
        allow: 'GET, HEAD',
      });
    } else if (
      kind !== 'asset' &&
      isPhone({ secChUaMobile: c.req.header('sec-ch-ua-mobile'), userAgent: c.req.header('user-agent') })
    ) {
      telemetry.consoleRefused('mobile');
      response =
        kind === 'page'
          ? new Response(renderPhoneRefusal(provider), {
              status: 403,
              headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' },
            })
          : problemResponse(
              'device_not_supported',
              'The console is available on tablets and larger devices, not on phones.',
              requestId,
            );
    }

    if (response) c.res = response;
    else await next();

    const headers = c.res.headers;
    // No console answer says what the cache did, a failure neither (the lookup's errors carry `Cache-Status`
    // for the API: `fwd=miss; detail=upstream-error` would tell a visitor nobody asked for the number lately).
    headers.delete('cache-status');
    headers.delete('age');
    // Only a search is limited, so only a search says where it stands: the page, assets and 404s touch no
    // shared store (each would otherwise cost a round trip to Redis or a Durable Object).
    // The search's own answers carry the state it took; a refusal before it (a phone) peeks at it.
    if (kind === 'search' && c.req.method === 'GET' && response !== undefined) {
      const state = await consoleLimiter.peek(services.addressOf(c));
      for (const [name, value] of Object.entries(consoleLimiter.fields.headers(state))) headers.set(name, value);
    }
    headers.set('content-security-policy', CONTENT_SECURITY_POLICY);
    headers.set('x-content-type-options', 'nosniff');
    headers.set('referrer-policy', 'no-referrer');
    if (kind === 'page' || kind === 'search') headers.append('vary', 'Sec-CH-UA-Mobile, User-Agent');
    return response;
  };
}
