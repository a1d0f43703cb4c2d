// A real identity provider for the tests: panva's oidc-provider (OpenID Certified) on a loopback port, issuing JWT
// access tokens (RFC 9068) for one resource with the client credentials grant. Its signing keys are the test's, so a
// rotation is a restart with another key set on the same port, as an operator rotates a provider's keys.
import { createServer } from 'node:http';
import { exportJWK, generateKeyPair } from 'jose';
import { fetchIdpToken } from './idp-token.mjs';

/**
 * oidc-provider, imported without its one warning about the runtime: it asks for Node 22, the gateway's minimum is
 * Node 20 and the tests run the provider there on purpose. Every other line it writes passes through.
 */
async function importProvider() {
  const warn = console.warn;
  console.warn = (...args) => {
    if (!String(args[0]).includes('Unsupported runtime')) warn(...args);
  };
  try {
    return (await import('oidc-provider')).default;
  } finally {
    console.warn = warn;
  }
}
const Provider = await importProvider();

/**
 * The provider's storage (grants, sessions, opaque tokens: none of which a client credentials grant for JWT access
 * tokens keeps), in a Map: a test IdP lives as long as its test. Passing one says so, where the provider's own
 * default warns that it is for development.
 */
class MapAdapter {
  static store = new Map();
  constructor(model) {
    this.model = model;
  }
  key(id) {
    return `${this.model}:${id}`;
  }
  async upsert(id, payload) {
    MapAdapter.store.set(this.key(id), payload);
  }
  async find(id) {
    return MapAdapter.store.get(this.key(id));
  }
  async findByUid() {
    return undefined;
  }
  async findByUserCode() {
    return undefined;
  }
  async consume(id) {
    const payload = MapAdapter.store.get(this.key(id));
    if (payload) payload.consumed = Math.floor(Date.now() / 1000);
  }
  async destroy(id) {
    MapAdapter.store.delete(this.key(id));
  }
  async revokeByGrantId() {}
}

/** A private signing key as a JWK, with its key id. */
export async function signingKey(kid, alg = 'ES256') {
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  return { ...(await exportJWK(privateKey)), kid, alg, use: 'sig' };
}

function providerOf(issuer, audience, apps, keys) {
  const alg = keys[0].alg;
  const provider = new Provider(issuer, {
    adapter: MapAdapter,
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
