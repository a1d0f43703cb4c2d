// The anonymous console: its page, its own script and style, and the one search it allows, under /console.
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import type { AppEnv, LookupNote } from '../app-env.js';
import { routeDocs } from '../docs/route-docs.js';
import { GatewayError, problemResponse } from '../errors.js';
import { clientAddress } from '../limits/client-address.js';
import type { RateLimitState } from '../limits/headers.js';
import { PRIVATE_ANSWER, searchResultOf } from '../search/search-contract.js';
import { readWhat } from '../request/request-parts.js';
import type { LookupContext } from '../lookup/types.js';
import type { Services } from '../services.js';
import { CONSOLE_SCRIPT, CONSOLE_STYLE } from './assets.js';
import { isPhone } from './device.js';
import { consoleExamples } from './examples.js';
import { CONSOLE_ICON, ICON_PATH } from './icon.js';
import { filterToProvider } from './provider-filter.js';
import { UPSTREAM_BODY } from '../upstream/search-client.js';
import { renderConsolePage, renderPhoneRefusal, SCRIPT_PATH, STYLE_PATH } from './page.js';

export const CONSOLE_PAGE_PATH = '/console';
export const CONSOLE_SEARCH_PATH = '/console/v2/contacts/search';

/** The console's searches are charged to this caller name (quotas, budget, usage). */
export const CONSOLE_CALLER: LookupContext = { client: 'console' };

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
  'config' | 'normalizer' | 'lookup' | 'peerAddress' | 'telemetry' | 'consoleLimiter' | 'guard' | 'logger' | 'clock'
>;

/** Each console search counted as the `console` caller with its result (its limits are the console's own). */
function consoleSearchAccounting(guard: Services['guard'], caller: string): MiddlewareHandler<AppEnv> {
  return async function consoleSearchAccounting(c, next) {
    await next();
    guard.countSearch(caller, searchResultOf(c.res.status, c.get('lookup')?.cache, c.error));
  };
}

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

  app.get(CONSOLE_PAGE_PATH, routeDocs.consolePage, (c) =>
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

  app.get(
    CONSOLE_SEARCH_PATH,
    routeDocs.consoleSearch,
    consoleSearchAccounting(services.guard, CONSOLE_CALLER.client),
    async (c) => {
      const e164 = services.normalizer.normalize(readWhat(c.req.url));
      const note: LookupNote = { e164 };
      c.set('lookup', note);
      const result = await services.lookup.lookup(e164, CONSOLE_CALLER);
      note.cache = result.cache;
      const filtered = filterToProvider(result.body, {
        provider,
        ...UPSTREAM_BODY,
      });
      // An answer with other providers but never the configured one: most likely CONSOLE_PROVIDER names no provider.
      if (filtered.kept > 0) providerMatched = true;
      else if (
        !providerMatched &&
        filtered.otherProviders.length > 0 &&
        services.clock() - lastProviderWarning >= PROVIDER_WARNING_EVERY_MS
      ) {
        lastProviderWarning = services.clock();
        services.logger.warn(
          {
            event: 'console_provider_not_in_answer',
            provider,
            providersSeen: filtered.otherProviders,
            providerPath: UPSTREAM_BODY.providerPath,
          },
          'CONSOLE_PROVIDER matched no result of an answer that holds other providers; check its spelling (the provider id or name)',
        );
      }
      // No Cache-Status or Age (the guard removes them from every console answer): they would tell an anonymous
      // visitor that someone looked the number up a moment ago, and (by the ttl of a positive or negative entry)
      // whether providers it must hide list the number.
      return c.body(filtered.body, 200, {
        'content-type': 'application/json; charset=utf-8',
        'cache-control': PRIVATE_ANSWER,
      });
    },
  );

  return app;
}

function consoleGuard(services: ConsoleServices, provider: string): MiddlewareHandler<AppEnv> {
  const { config, telemetry, consoleLimiter } = services;

  return async function consoleGuard(c, next) {
    const requestId = c.get('requestId');
    const address = clientAddress(services.peerAddress(c), c.req.header('x-forwarded-for'), config.trustProxyHops);
    const kind = ROUTES.get(c.req.path);
    let state: RateLimitState | undefined;
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
    } else if (kind === 'search') {
      try {
        const outcome = await consoleLimiter.consume(address);
        state = outcome.state;
        if (!outcome.allowed) {
          telemetry.consoleRefused('rate_limited');
          const seconds = String(outcome.retryAfterSeconds);
          const who = outcome.scope === 'address' ? 'from your address' : 'to the console';
          response = problemResponse(
            'too_many_requests',
            `Too many requests ${who}; try again in ${seconds} s.`,
            requestId,
            { 'retry-after': seconds },
          );
        }
      } catch (err) {
        if (!(err instanceof GatewayError)) throw err;
        response = problemResponse(err.code, err.message, requestId, err.headers);
      }
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
    if (kind === 'search' && c.req.method === 'GET') {
      state ??= await consoleLimiter.peek(address);
      for (const [name, value] of Object.entries(consoleLimiter.fields.headers(state))) headers.set(name, value);
    }
    headers.set('content-security-policy', CONTENT_SECURITY_POLICY);
    headers.set('x-content-type-options', 'nosniff');
    headers.set('referrer-policy', 'no-referrer');
    if (kind === 'page' || kind === 'search') headers.append('vary', 'Sec-CH-UA-Mobile, User-Agent');
    return response;
  };
}

/** The scheme and authority of an absolute-form target (`GET http://host/console/../x HTTP/1.1`), RFC 9112 3.2.2. */
const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;

/**
 * Dot segments are resolved before routing (`/console/%2e%2e/v2/...` arrives as `/v2/...`); where the
 * runtime still knows the request target as sent, a target that started under /console and left it is
 * answered 404 here, as the console promises for everything under /console it does not serve; an absolute-form
 * target is judged by its path, as an origin-form one.
 */
export function consoleTraversalGuard(services: Pick<Services, 'requestTarget'>): MiddlewareHandler<AppEnv> {
  return async function consoleTraversalGuard(c: Context<AppEnv>, next) {
    if (!c.req.path.startsWith('/console')) {
      const target = services.requestTarget?.(c)?.replace(ABSOLUTE_FORM, '');
      if (target !== undefined && /^\/console(\/|$|%2f)/i.test(target)) {
        return problemResponse(
          'not_found',
          'The console offers only its page and GET /console/v2/contacts/search.',
          c.get('requestId'),
        );
      }
    }
    await next();
  };
}
