import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from './config.js';

const problemsOf = (env: Record<string, string>): string[] => {
  try {
    parseConfig(env);
    return [];
  } catch (err) {
    return (err as ConfigError).problems.map((p) => `${p.variable}: ${p.problem}`);
  }
};

describe('the TLS settings', () => {
  it('reads the files and the header name (lowercased)', () => {
    const { tls } = parseConfig({
      TLS_CERT_FILE: '/tls/tls.crt',
      TLS_KEY_FILE: '/tls/tls.key',
      TLS_CLIENT_CA_FILE: '/tls/ca.crt',
      TLS_CLIENT_CERT_HEADER: 'X-Forwarded-Client-Cert',
      TRUST_PROXY_HOPS: '1',
    });
    expect(tls).toEqual({
      certFile: '/tls/tls.crt',
      keyFile: '/tls/tls.key',
      clientCaFile: '/tls/ca.crt',
      clientCrlFile: undefined,
      clientCertHeader: 'x-forwarded-client-cert',
      clientCertHeaderFrom: ['127.0.0.0/8', '::1'],
    });
    expect(parseConfig({}).tls.certFile).toBeUndefined();
  });

  it("reads the proxy's addresses and ranges, and refuses anything else", () => {
    const from = (v: string) => parseConfig({ TLS_CLIENT_CERT_HEADER_FROM: v }).tls.clientCertHeaderFrom;
    expect(from(' 10.0.0.0/8, 192.0.2.7 ,fd00::/8,::1')).toEqual(['10.0.0.0/8', '192.0.2.7', 'fd00::/8', '::1']);
    for (const wrong of ['10.0.0.0/33', '300.1.1.1', 'proxy.example', '::1/129', '10.0.0.1/8/8', ','])
      expect(problemsOf({ TLS_CLIENT_CERT_HEADER_FROM: wrong }), wrong).toEqual([
        'TLS_CLIENT_CERT_HEADER_FROM: must be IP addresses or CIDR ranges, comma-separated (e.g. 127.0.0.0/8,::1 or 10.0.0.0/8)',
      ]);
  });

  it('refuses settings that only work together, one line each', () => {
    expect(problemsOf({ TLS_CERT_FILE: '/c' })).toEqual([
      'TLS_KEY_FILE: is required with TLS_CERT_FILE and TLS_KEY_FILE: set both to serve HTTPS, or neither',
    ]);
    expect(problemsOf({ TLS_KEY_FILE: '/k' })[0]).toMatch(/^TLS_CERT_FILE: is required/);
    expect(problemsOf({ TLS_CERT_FILE: '/c', TLS_KEY_FILE: '/k', TLS_CLIENT_CRL_FILE: '/crl' })[0]).toMatch(
      /^TLS_CLIENT_CRL_FILE: is read only with TLS_CLIENT_CA_FILE/,
    );
    expect(problemsOf({ TLS_CLIENT_CA_FILE: '/ca' })[0]).toMatch(/^TLS_CLIENT_CA_FILE: verifies client certificates/);
    expect(problemsOf({ TLS_CLIENT_CERT_HEADER: 'x-ssl-client-cert' })).toEqual([
      'TLS_CLIENT_CERT_HEADER: is read only from a trusted proxy: set TRUST_PROXY_HOPS to the number of proxies in front',
    ]);
    expect(problemsOf({ TLS_CLIENT_CERT_HEADER: 'bad header', TRUST_PROXY_HOPS: '1' })[0]).toMatch(
      /^TLS_CLIENT_CERT_HEADER: must be an HTTP header name/,
    );
  });
});
