// One fetch of an identity provider's document: https only (loopback, or any host where allowed, aside), a size
// bound met before the body is read whole, no redirects followed, one log line and one count whatever the outcome.
import { describe, expect, it } from 'vitest';
import { noopTelemetry, type KeySetFetchOutcome } from '../../observability/telemetry.js';
import { fetchableUrl, fetchIdpDocument, KEY_SET_MAX_BYTES } from './key-set-fetch.js';

async function outcomeOf(answer: () => Response, allowHttp = false, url = 'https://idp.example.test/certs') {
  const outcomes: KeySetFetchOutcome[] = [];
  const lines: unknown[] = [];
  let asked = 0;
  const log = (fields: unknown) => void lines.push(fields);
  const deps = {
    fetch: (async () => {
      asked++;
      return answer();
    }) as unknown as typeof fetch,
    logger: { debug: log, info: log, warn: log, error: log },
    telemetry: {
      ...noopTelemetry,
      keySetFetch: (_i: string, _d: string, o: KeySetFetchOutcome) => void outcomes.push(o),
    },
    allowHttp,
  };
  const read = await fetchIdpDocument(deps, { issuer: 'x', index: 0, document: 'jwks', url }, (json) => json).then(
    () => 'read',
    () => 'refused',
  );
  return { read, outcomes, lines: lines.length, asked };
}

describe('a fetch of an identity provider document', () => {
  it('goes to https, or to http on a loopback host, or to any http host where allowed', () => {
    expect(fetchableUrl('https://idp.example.test/certs', false)).toBe(true);
    expect(fetchableUrl('http://idp.example.test/certs', false)).toBe(false);
    expect(fetchableUrl('http://idp.example.test/certs', true)).toBe(true);
    expect(fetchableUrl('http://127.0.0.1:8080/certs', false)).toBe(true);
    expect(fetchableUrl('http://[::1]:8080/certs', false)).toBe(true);
    expect(fetchableUrl('http://127.0.0.1.example.test/certs', false)).toBe(false);
    expect(fetchableUrl('file:///etc/passwd', true)).toBe(false);
  });

  it('refuses a plain http issuer in production without asking it', async () => {
    const at = await outcomeOf(() => Response.json({ keys: [] }), false, 'http://idp.example.test/certs');
    expect(at).toEqual({ read: 'refused', outcomes: ['insecure_url'], lines: 1, asked: 0 });
  });

  it('reads a JSON object, logged and counted once', async () => {
    expect(await outcomeOf(() => Response.json({ keys: [] }))).toEqual({
      read: 'read',
      outcomes: ['ok'],
      lines: 1,
      asked: 1,
    });
  });

  it('refuses a body past the bound, declared or streamed, a redirect, a non-object', async () => {
    const big = 'x'.repeat(KEY_SET_MAX_BYTES + 1);
    const streamed = () => new Response(new Blob([big]).stream(), { headers: { 'content-type': 'application/json' } });
    expect((await outcomeOf(() => new Response(big))).outcomes).toEqual(['too_large']);
    expect((await outcomeOf(streamed)).outcomes).toEqual(['too_large']);
    const redirect = () => new Response(null, { status: 302, headers: { location: 'https://elsewhere.example' } });
    expect((await outcomeOf(redirect)).outcomes).toEqual(['http_error']);
    expect((await outcomeOf(() => Response.json([1, 2]))).outcomes).toEqual(['malformed']);
    expect((await outcomeOf(() => new Response('{"keys":'))).outcomes).toEqual(['malformed']);
  });
});
