// A real identity provider for the tests: panva's oidc-provider (OpenID Certified) on a loopback port, issuing JWT
// access tokens (RFC 9068) for one resource with the client credentials grant. Its signing keys are the test's, so a
// rotation is a restart with another key set on the same port, as an operator rotates a provider's keys.
import { createServer } from 'node:http';
import Provider from 'oidc-provider';
import { exportJWK, generateKeyPair } from 'jose';
import { fetchIdpToken } from './idp-token.mjs';

/** A private signing key as a JWK, with its key id. */
export async function signingKey(kid, alg = 'ES256') {
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  return { ...(await exportJWK(privateKey)), kid, alg, use: 'sig' };
}

function providerOf(issuer, audience, apps, keys) {
  const alg = keys[0].alg;
  const provider = new Provider(issuer, {
    clients: apps.map((app) => ({
      client_id: app.id,
      client_secret: app.secret,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_post',
      id_token_signed_response_alg: alg,
    })),
    features: {
      clientCredentials: { enabled: true },
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => audience,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({ scope: 'search', audience, accessTokenFormat: 'jwt', jwt: { sign: { alg } } }),
      },
    },
    ttl: { ClientCredentials: 600 },
    jwks: { keys },
  });
  return provider.callback();
}

/** Starts the provider at `port` (0: any), signing with the first of `keys`. */
export async function startIdp({ port = 0, audience, apps, keys }) {
  const requests = [];
  let handler;
  let issuer;
  const server = createServer((req, res) => {
    requests.push(req.url);
    handler(req, res);
  });
  const listen = (at) => new Promise((resolve) => server.listen(at, '127.0.0.1', resolve));
  await listen(port);
  const bound = server.address().port;
  issuer = `http://127.0.0.1:${bound}`;
  handler = providerOf(issuer, audience, apps, keys);
  return {
    issuer,
    port: bound,
    requests,
    /** The access token the provider issues to `app`. */
    token: (app) => fetchIdpToken(issuer, audience, app),
    /** The provider signs with the first of `next` from now on and publishes them all. */
    rotate(next) {
      handler = providerOf(issuer, audience, apps, next);
    },
    stop() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
