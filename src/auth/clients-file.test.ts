// The clients file's refusals (the reader both runtimes use): a syntax error named by its place with no byte of the
// file, a schema error naming the field and what is wrong with it, a key given twice refused.
import { describe, expect, it } from 'vitest';
import { readClientsFile } from './clients-file.js';

const hash = `sha256:${'a'.repeat(64)}`;

const problemOf = (text: string): string | undefined => {
  const read = readClientsFile(text, ['console']);
  return read.ok ? undefined : read.problem;
};

/** A document as an operator writes one: two-space indentation, one field a line. */
const pretty = (doc: unknown) => JSON.stringify(doc, null, 2);

describe('a clients file that is not JSON', () => {
  // A hash fragment and a variable name, as an operator's half-edited file or /proc/self/environ would show them.
  const texts = [
    '{"clients": [{"id": "crm", "secrets": [{"hash": sha256:3f9a7c61}]}]}',
    'GATEWAY_TOKEN_SECRET=3f9a7c61e0d4\u0000PATH=/usr/bin',
    '{"clients": [{"id": "crm", "secrets": [{"hash": "sha256:3f9a7c61\n"}]}]}',
    '{"clients": [], // 3f9a7c61\n}',
    '{"clients": [3f9a7c61]}',
    '{"clients": [],}',
    '',
  ];

  it('is named by its line and column, with no byte of the file in the line', () => {
    for (const text of texts) {
      const problem = problemOf(text);
      expect(problem, text).toMatch(/^is not JSON \([a-z ]+ at line \d+, column \d+\)$/);
      expect(problem).not.toMatch(/3f9a|GATEWAY_TOKEN|PATH|usr|crm|sha256/);
    }
    // JSON.parse's own message is what the line no longer carries: it quotes the text.
    expect(() => JSON.parse(texts[1]!)).toThrow(/"GATEWAY_TO/);
  });

  it('places the error where it is', () => {
    expect(problemOf('{\n  "clients": [\n    {"id": "crm",, }\n  ]\n}')).toBe(
      'is not JSON (property name expected at line 3, column 18)',
    );
    expect(problemOf('{"clients": []}\n{}')).toBe('is not JSON (end of file expected at line 2, column 1)');
  });

  it('refuses what only a lenient reader takes, and nesting past 64 levels, without throwing', () => {
    expect(problemOf('\u00a0{"clients": []}')).toBe('is not JSON (invalid symbol at line 1, column 1)');
    expect(problemOf('{"clients":\r\r[3f9a7c61]}')).toBe('is not JSON (invalid symbol at line 3, column 3)');
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    expect(JSON.parse(deep)).toBeInstanceOf(Array);
    expect(problemOf(deep)).toBe('nests deeper than 64 levels');
    const nested = (n: number) => `{"clients": ${'['.repeat(n - 1)}${']'.repeat(n - 1)}}`;
    expect(problemOf(nested(65))).toBe('nests deeper than 64 levels (at line 1, column 76)');
    expect(problemOf(nested(64))).toBe('clients[0]: must be an object (at line 1, column 14)');
  });
});

describe('a clients file that breaks the schema', () => {
  const client = { id: 'crm', secrets: [{ hash }] };
  const cases: [unknown, string][] = [
    [[], '(top level): must be an object (at line 1, column 1)'],
    [{ clients: 'crm' }, 'clients: must be an array (at line 2, column 14)'],
    [{ clients: [{ secrets: [{ hash }] }] }, 'clients[0].id: is missing (at line 3, column 5)'],
    [{ clients: [{ ...client, id: 7 }] }, 'clients[0].id: must be a string (at line 4, column 13)'],
    [{ clients: [{ ...client, admin: 'yes' }] }, 'clients[0].admin: must be true or false (at line 10, column 16)'],
    [
      { clients: [{ ...client, token_ttl_seconds: '600' }] },
      'clients[0].token_ttl_seconds: must be a number (at line 10, column 28)',
    ],
    [
      { clients: [{ ...client, token_ttl_seconds: 1.5 }] },
      'clients[0].token_ttl_seconds: must be a whole number (at line 10, column 28)',
    ],
    [
      { clients: [{ ...client, token_ttl_seconds: 5 }] },
      'clients[0].token_ttl_seconds: must be at least 60 (at line 10, column 28)',
    ],
    [
      { clients: [{ ...client, rate_per_minute: 1e9 }] },
      'clients[0].rate_per_minute: must be at most 10000000 (at line 10, column 26)',
    ],
    [{ clients: [{ ...client, secrets: {} }] }, 'clients[0].secrets: must be an array (at line 5, column 18)'],
  ];

  it('names the field and what is wrong with it, and where', () => {
    for (const [doc, problem] of cases) expect(problemOf(pretty(doc)), pretty(doc)).toBe(problem);
  });

  it('names a field the schema does not define by its place, not by its name', () => {
    const problem = problemOf(pretty({ clients: [{ ...client, rate_3f9a7c61: 5 }] }));
    expect(problem).toBe(
      'clients[0]: has a field the clients file does not define (config/clients-file.schema.json) (at line 10, column 7)',
    );
  });
});

describe('a clients file that gives a key twice', () => {
  it('is refused where JSON.parse would keep the last one, at any depth, under any spelling', () => {
    const twice = [
      '{"clients": [{"id": "crm", "secrets": [{"hash": "HASH"}], "admin": false, "admin": true}]}',
      '{"clients": [], "clients": [{"id": "crm", "secrets": [{"hash": "HASH"}]}]}',
      '{"clients": [{"id": "crm", "secrets": [{"hash": "HASH", "hash": "HASH"}]}]}',
      '{"clients": [{"id": "crm", "\\u0069d": "ops", "secrets": [{"hash": "HASH"}]}]}',
    ].map((text) => text.replaceAll('HASH', hash));
    for (const text of twice) {
      // JSON.parse takes each of them, keeping the last value of the key.
      expect(JSON.parse(text)).toHaveProperty('clients');
      expect(problemOf(text), text).toMatch(/^gives a key twice in one object \(at line 1, column \d+\)$/);
    }
    expect((JSON.parse(twice[0]!) as { clients: { admin: boolean }[] }).clients[0]!.admin).toBe(true);
    expect(problemOf(twice[0]!)).toBe(
      `gives a key twice in one object (at line 1, column ${twice[0]!.indexOf('"admin": true') + 1})`,
    );
  });
});

describe('trusted issuers and the identities of clients at them', () => {
  const issuer = 'https://login.example.test/realms/apps';
  const trusted = { issuer, audience: 'callerid' };
  const crm = { id: 'crm', identities: [{ issuer, subject: 'crm-app' }] };

  it('reads a client with identities and no secrets, and the issuer with its defaults', () => {
    const read = readClientsFile(JSON.stringify({ issuers: [trusted], clients: [crm] }), []);
    expect(read).toEqual({
      ok: true,
      clients: [{ id: 'crm', secrets: [], admin: false, identities: [{ issuer, subject: 'crm-app' }] }],
      issuers: [
        {
          issuer,
          audiences: ['callerid'],
          jwksUri: undefined,
          clientClaims: ['client_id', 'azp'],
          algorithms: ['RS256', 'PS256', 'ES256', 'EdDSA'],
          index: 0,
        },
      ],
    });
  });

  it('refuses what the identities and issuers cannot mean', () => {
    const cases: [unknown, string][] = [
      [{ clients: [crm] }, 'clients[0].identities[0].issuer: is not one of the issuers'],
      [{ issuers: [trusted, trusted], clients: [] }, 'issuers[1].issuer: appears twice'],
      [
        { issuers: [trusted], clients: [crm, { ...crm, id: 'pbx' }] },
        'clients[1].identities[0]: names an identity another client has',
      ],
      [{ issuers: [trusted], clients: [{ id: 'crm' }] }, 'clients[0]: must list secrets, identities or certificates'],
    ];
    for (const [doc, problem] of cases) expect(problemOf(JSON.stringify(doc)), JSON.stringify(doc)).toBe(problem);
    for (const algorithms of [['none'], ['HS256'], []])
      expect(problemOf(JSON.stringify({ issuers: [{ ...trusted, algorithms }], clients: [] }))).toMatch(
        /^issuers\[0\]\.algorithms/,
      );
    expect(problemOf(JSON.stringify({ issuers: [{ ...trusted, issuer: 'ftp://x' }], clients: [] }))).toMatch(
      /^issuers\[0\]\.issuer: must be an http\(s\) URL/,
    );
  });
});

describe("a clients file's certificates", () => {
  it('reads each selector of a client, and refuses one that two clients list', () => {
    const read = readClientsFile(
      JSON.stringify({ clients: [{ id: 'pbx', secrets: [{ hash }], certificates: [{ subject: 'CN=pbx' }] }] }),
      [],
    );
    expect(read.ok && read.clients[0]!.certificates).toEqual([{ subject: 'CN=pbx' }]);
    const twice = {
      clients: [
        { id: 'pbx', secrets: [{ hash }], certificates: [{ san_uri: 'spiffe://example.org/pbx' }] },
        { id: 'crm', secrets: [{ hash }], certificates: [{ san_uri: 'spiffe://example.org/pbx' }] },
      ],
    };
    expect(problemOf(JSON.stringify(twice))).toBe(
      'clients[1].certificates[0]: names a certificate another client lists too',
    );
  });
});
