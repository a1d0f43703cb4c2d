// Behaviour of the Contact Lookup Service simulator and its bundled directory, through app.request.
import { describe, it, expect } from 'vitest';
import { parsePhoneNumber } from 'libphonenumber-js';
import { createSimulator, type SimulatorOptions } from './simulator-app.js';
import { DIRECTORY_ENTRIES, SAMPLE_NUMBERS, createDirectoryIndex } from './directory.js';

type App = ReturnType<typeof createSimulator>['app'];

function login(app: App, fields: Record<string, string> = {}) {
  const body = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: 'sim-client',
    client_secret: 'sim-secret',
    ...fields,
  });
  return app.request('/token/login', {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: body.toString(),
  });
}

async function tokenFor(app: App): Promise<string> {
  const res = await login(app);
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

function search(app: App, what: string | null, token?: string, init: RequestInit = {}) {
  const query = what === null ? '' : `?what=${encodeURIComponent(what)}`;
  const headers: Record<string, string> = token === undefined ? {} : { Authorization: `Bearer ${token}` };
  return app.request(`/v2/contacts/search${query}`, { headers, ...init });
}

function withClock(options: SimulatorOptions = {}) {
  let now = Date.UTC(2030, 0, 1);
  const simulator = createSimulator({ ...options, clock: () => now });
  return { ...simulator, advance: (ms: number) => void (now += ms) };
}

interface SearchBody {
  query: { what: string };
  total: number;
  results: { provider: { id: string }; phones: { e164: string }[] }[];
}

describe('simulator token endpoint', () => {
  it('issues a token in the upstream shape, with expires_in as a string and scope as an array', async () => {
    const { app } = createSimulator();
    const res = await login(app);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(
      ['access_token', 'clientId', 'expires_in', 'scope', 'token_type', 'uniqueId'].sort(),
    );
    expect(body.access_token).toEqual(expect.stringMatching(/^[\w-]{20,}$/));
    expect(body).toMatchObject({
      token_type: 'Bearer',
      expires_in: '90000',
      scope: [{ service: 'SEARCH_contacts_watch', permission: 'READ', orderId: null }],
      uniqueId: null,
      clientId: 'sim-client',
    });
  });

  it('issues a different token on each call and reports a configured lifetime', async () => {
    const { app } = createSimulator({ tokenLifetimeSeconds: 60, clients: { other: 's3cret' } });
    const first = (await (await login(app, { client_id: 'other', client_secret: 's3cret' })).json()) as Record<
      string,
      unknown
    >;
    const second = (await (await login(app, { client_id: 'other', client_secret: 's3cret' })).json()) as Record<
      string,
      unknown
    >;
    expect(first.expires_in).toBe('60');
    expect(first.clientId).toBe('other');
    expect(first.access_token).not.toBe(second.access_token);
  });

  it('answers 401 invalid_client to a wrong secret or an unknown client', async () => {
    const { app } = createSimulator();
    const attempts: Record<string, string>[] = [
      { client_secret: 'wrong' },
      { client_id: 'nobody' },
      { client_id: 'toString' },
    ];
    for (const fields of attempts) {
      const res = await login(app, fields);
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: 'invalid_client' });
    }
  });

  it('answers 400 to a wrong grant, a missing field or a body that is not form-encoded', async () => {
    const { app } = createSimulator();
    const wrongGrant = await login(app, { grant_type: 'password' });
    expect(wrongGrant.status).toBe(400);
    expect(await wrongGrant.json()).toEqual({ error: 'unsupported_grant_type' });

    const missing = await login(app, { client_secret: '' });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ error: 'invalid_request' });

    const json = await app.request('/token/login', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: 'sim-client', client_secret: 'sim-secret' }),
    });
    expect(json.status).toBe(400);
  });

  it('answers a 200 without access_token when malformedToken is set', async () => {
    const { app } = createSimulator({ malformedToken: true });
    const res = await login(app);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).not.toHaveProperty('access_token');
    expect(body.token_type).toBe('Bearer');
  });

  it('answers 500 when tokenErrorRate is 1, and recovers when the fault is lifted at run time', async () => {
    const { app, controls } = createSimulator({ tokenErrorRate: 1 });
    expect((await login(app)).status).toBe(500);
    controls.setFaults({ tokenErrorRate: 0 });
    expect((await login(app)).status).toBe(200);
    expect(controls.stats().tokenCalls).toBe(2);
  });
});

describe('simulator search endpoint', () => {
  it('answers 401 with a Bearer challenge without a token or with one it never issued', async () => {
    const { app } = createSimulator();
    const none = await search(app, SAMPLE_NUMBERS.mobile);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer\b/);
    expect(await none.json()).toEqual({ error: 'invalid_token' });

    const forged = await search(app, SAMPLE_NUMBERS.mobile, 'not-a-real-token');
    expect(forged.status).toBe(401);
    expect(forged.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
  });

  it('finds a listed number with a valid token', async () => {
    const { app } = createSimulator();
    const res = await search(app, SAMPLE_NUMBERS.mobile, await tokenFor(app));
    expect(res.status).toBe(200);
    const body = (await res.json()) as SearchBody;
    expect(body.query).toEqual({ what: SAMPLE_NUMBERS.mobile });
    expect(body.total).toBe(body.results.length);
    expect(body.results[0]?.phones.some((p) => p.e164 === SAMPLE_NUMBERS.mobile)).toBe(true);
  });

  it('answers total 0 and no results for an unlisted number', async () => {
    const { app } = createSimulator();
    const res = await search(app, SAMPLE_NUMBERS.unlisted, await tokenFor(app));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ query: { what: SAMPLE_NUMBERS.unlisted }, total: 0, results: [] });
  });

  it('returns one entry per provider for a number both providers list', async () => {
    const { app } = createSimulator();
    const body = (await (await search(app, SAMPLE_NUMBERS.bothProviders[0], await tokenFor(app))).json()) as SearchBody;
    expect(body.total).toBe(2);
    expect(body.results.map((r) => r.provider.id).sort()).toEqual(['openbook', 'swissdir']);
  });

  it('answers 400 when what is missing', async () => {
    const { app } = createSimulator();
    expect((await search(app, null, await tokenFor(app))).status).toBe(400);
  });

  it('rejects a token once its lifetime has passed on the injected clock', async () => {
    const { app, advance } = withClock({ tokenLifetimeSeconds: 100 });
    const token = await tokenFor(app);
    advance(99_999);
    expect((await search(app, SAMPLE_NUMBERS.mobile, token)).status).toBe(200);
    advance(1);
    expect((await search(app, SAMPLE_NUMBERS.mobile, token)).status).toBe(401);
  });

  it('rejects every issued token after revokeAllTokens, and accepts a new one', async () => {
    const { app, controls } = createSimulator();
    const token = await tokenFor(app);
    controls.revokeAllTokens();
    expect((await search(app, SAMPLE_NUMBERS.mobile, token)).status).toBe(401);
    expect((await search(app, SAMPLE_NUMBERS.mobile, await tokenFor(app))).status).toBe(200);
  });

  it('revokes tokens revokeTokensAfterMs after issue although expires_in says longer', async () => {
    const { app, advance } = withClock({ revokeTokensAfterMs: 5_000 });
    const res = await login(app);
    const { access_token: token, expires_in } = (await res.json()) as { access_token: string; expires_in: string };
    expect(expires_in).toBe('90000');
    advance(4_999);
    expect((await search(app, SAMPLE_NUMBERS.mobile, token)).status).toBe(200);
    advance(1);
    expect((await search(app, SAMPLE_NUMBERS.mobile, token)).status).toBe(401);
  });

  it('answers 500 with a contact-support message when errorRate is 1', async () => {
    const { app, controls } = createSimulator();
    const token = await tokenFor(app);
    controls.setFaults({ errorRate: 1 });
    const res = await search(app, SAMPLE_NUMBERS.mobile, token);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: 'internal_error', message: 'Internal error, please contact support' });
  });

  it('answers 429 with the configured Retry-After, or without one, and counts those calls', async () => {
    const { app, controls } = createSimulator();
    const token = await tokenFor(app);
    controls.setFaults({ rateLimitRate: 1, rateLimitRetryAfter: '3' });
    const limited = await search(app, SAMPLE_NUMBERS.mobile, token);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('3');
    controls.setFaults({ rateLimitRetryAfter: 'Wed, 21 Oct 2037 07:28:00 GMT' });
    expect((await search(app, SAMPLE_NUMBERS.mobile, token)).headers.get('retry-after')).toBe(
      'Wed, 21 Oct 2037 07:28:00 GMT',
    );
    controls.setFaults({ rateLimitRetryAfter: null });
    const bare = await search(app, SAMPLE_NUMBERS.mobile, token);
    expect(bare.status).toBe(429);
    expect(bare.headers.get('retry-after')).toBeNull();
    controls.setFaults({ rateLimitRate: 0 });
    expect((await search(app, SAMPLE_NUMBERS.mobile, token)).status).toBe(200);
    expect(controls.stats()).toMatchObject({ searchCalls: 4, rateLimitedCalls: 3 });
  });

  it('measures the most searches it was answering at once', async () => {
    const { app, controls } = createSimulator({ latencyMs: 30 });
    const token = await tokenFor(app);
    await Promise.all(Array.from({ length: 5 }, () => search(app, SAMPLE_NUMBERS.mobile, token)));
    await search(app, SAMPLE_NUMBERS.mobile, token);
    expect(controls.stats()).toMatchObject({ searchesInFlight: 0, maxSearchesInFlight: 5 });
    controls.resetStats();
    expect(controls.stats().maxSearchesInFlight).toBe(0);
  });

  it('holds a hung search open until the client aborts', async () => {
    const { app, controls } = createSimulator();
    const token = await tokenFor(app);
    controls.setFaults({ hangRate: 1 });
    const abort = new AbortController();
    let settled = false;
    const pending = Promise.resolve(search(app, SAMPLE_NUMBERS.mobile, token, { signal: abort.signal })).finally(() => {
      settled = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(settled).toBe(false);
    abort.abort();
    await pending;
  });

  it('records the Authorization headers and numbers it received, until resetStats', async () => {
    const { app, controls } = createSimulator();
    const token = await tokenFor(app);
    await search(app, SAMPLE_NUMBERS.mobile, token);
    await search(app, SAMPLE_NUMBERS.mobile, token);
    await search(app, SAMPLE_NUMBERS.unlisted);
    const stats = controls.stats();
    expect(stats.searchCalls).toBe(3);
    expect(stats.tokenCalls).toBe(1);
    expect(stats.authorizationsSeen).toEqual([`Bearer ${token}`, `Bearer ${token}`]);
    expect(stats.searchByNumber).toEqual({ [SAMPLE_NUMBERS.mobile]: 2, [SAMPLE_NUMBERS.unlisted]: 1 });
    controls.resetStats();
    expect(controls.stats()).toEqual({
      tokenCalls: 0,
      searchCalls: 0,
      searchByNumber: {},
      authorizationsSeen: [],
      traceparentsSeen: [],
      tracestatesSeen: [],
      loginTraceparentsSeen: [],
      searchesInFlight: 0,
      maxSearchesInFlight: 0,
      rateLimitedCalls: 0,
      hugeBodyBytesSent: 0,
    });
  });
});

describe('bundled directory', () => {
  const index = createDirectoryIndex();
  const fiction = [
    /^\+442079460\d{3}$/,
    /^\+441134960\d{3}$/,
    /^\+441614960\d{3}$/,
    /^\+447700900\d{3}$/,
    /^\+6125550\d{4}$/,
    /^\+61491570\d{3}$/,
  ];

  it('holds at least 60 numbers, all in ranges reserved for fiction, with displays libphonenumber agrees with', () => {
    expect(index.numbers().length).toBeGreaterThanOrEqual(60);
    for (const entry of DIRECTORY_ENTRIES) {
      for (const phone of entry.phones) {
        expect(
          fiction.some((range) => range.test(phone.e164)),
          phone.e164,
        ).toBe(true);
        expect(parsePhoneNumber(phone.e164).isPossible()).toBe(true);
        expect(phone.display).toBe(parsePhoneNumber(phone.e164).formatNational());
      }
    }
  });

  it('gives every entry a unique provider-prefixed id and a consistent person/organization shape', () => {
    const ids = DIRECTORY_ENTRIES.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const entry of DIRECTORY_ENTRIES) {
      expect(entry.id).toMatch(new RegExp(`^${entry.provider.id}:[0-9a-f]{8}$`));
      expect(
        entry.type === 'person'
          ? entry.person !== null && entry.organization === null
          : entry.organization !== null && entry.person === null,
      ).toBe(true);
    }
  });

  it('matches the sample numbers it advertises', () => {
    const providersOf = (n: string) =>
      index
        .lookup(n)
        .map((e) => e.provider.id)
        .sort();
    for (const n of SAMPLE_NUMBERS.bothProviders) expect(providersOf(n)).toEqual(['openbook', 'swissdir']);
    for (const n of SAMPLE_NUMBERS.swissdirOnly) expect(providersOf(n)).toEqual(['swissdir']);
    for (const n of SAMPLE_NUMBERS.openbookOnly) expect(providersOf(n)).toEqual(['openbook']);
    expect(providersOf(SAMPLE_NUMBERS.sharedHousehold)).toEqual(['openbook', 'swissdir', 'swissdir']);
    expect(providersOf(SAMPLE_NUMBERS.threeProviders)).toEqual(['citylines', 'openbook', 'swissdir']);
    expect(index.lookup(SAMPLE_NUMBERS.mobile)[0]?.phones[0]?.kind).toBe('mobile');
    expect(index.lookup(SAMPLE_NUMBERS.fax)[0]?.phones.find((p) => p.e164 === SAMPLE_NUMBERS.fax)?.kind).toBe('fax');
    expect(index.lookup(SAMPLE_NUMBERS.unlisted)).toEqual([]);
    expect(DIRECTORY_ENTRIES.some((e) => /[^\p{ASCII}]/u.test(e.displayName))).toBe(true);
  });
});
