// GET /v2/contacts/cnam?what=: the caller's name as plain ASCII text for PBX dialplans (docs/pbx.md).
// A lookup that yields no name is still a 200 with CNAM_FALLBACK, and `CNAM-Result` says why; only
// credentials that are wrong (401) or throttled (429) get another status, also with the fallback as body.
import { Hono } from 'hono';
import type { AppEnv } from '../../http/app-env.js';
import { cnamDocs } from './cnam-docs.js';
import { createCallerNameOf } from './caller-name.js';
import { renderCnamText } from './cnam-text.js';
import type { Services } from '../../services/services.js';
import { requestOf } from '../../http/request-of.js';
import { UPSTREAM_BODY } from '../../upstream/search-client.js';

const CNAM_ROUTE = '/v2/contacts/cnam';

export function contactsCnamRoutes(
  services: Pick<Services, 'config' | 'search' | 'peerAddress' | 'clientCertificates'>,
): Hono<AppEnv> {
  const { config, search, peerAddress } = services;
  const certificateOf = services.clientCertificates.of;
  const { fallback, deadlineMs } = config.cnam;
  const callerNameOf = createCallerNameOf({
    resultsPath: UPSTREAM_BODY.resultsPath,
    displayNamePath: UPSTREAM_BODY.displayNamePath,
    maxLength: config.cnam.maxLength,
  });
  const app = new Hono<AppEnv>();

  app.get(CNAM_ROUTE, cnamDocs.cnam, async (c) => {
    const request = requestOf(c, peerAddress, certificateOf);
    const input = {
      target: c.req.url,
      prefer: c.req.header('prefer'),
      requestId: c.get('requestId'),
      defaultDeadlineMs: deadlineMs,
      span: c.get('span'),
    };
    const outcome = await search.byCredentials(request, input);
    if (outcome.caller !== undefined) c.set('clientId', outcome.caller);
    if (outcome.lookup !== undefined) c.set('lookup', outcome.lookup);
    const { status, headers, body } = renderCnamText(outcome, callerNameOf, fallback);
    return c.body(body, status, headers);
  });

  return app;
}
