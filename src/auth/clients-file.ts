// The clients file (GATEWAY_CLIENTS_FILE on Node, the GATEWAY_CLIENTS_JSON binding on Workers): each internal
// client's id, secret hashes (several during a rotation, each with an optional `not_after`), admin flag, upstream
// quota and token lifetime. This schema is the one source of config/clients-file.schema.json (a test keeps the two
// equal); a document that breaks it is named by the path of its first wrong field and its place, never by its content
// (but for a client id the schema has passed).
import * as z from 'zod/mini';
import { readJsonText } from './json-text.js';
import {
  federationProblem,
  IDENTITY_SCHEMA,
  ISSUER_SCHEMA,
  trustedIssuerOf,
  type TrustedIssuer,
} from './federated/trusted-issuers.js';
import { CERTIFICATE_SELECTOR, certificateClash, type CertificateSelector } from './certificates/certificate-index.js';

/** One client as the registry holds it, from the file or from GATEWAY_CLIENTS and its companion variables. */
export interface ClientEntry {
  id: string;
  /** Lowercase hex SHA-256 digests of the accepted secrets, each until its `notAfter` (ms) if it has one. */
  secrets: { sha256: string; notAfter?: number }[];
  admin: boolean;
  /** Upstream calls per UTC day; undefined: CLIENT_UPSTREAM_QUOTA_PER_DAY. */
  upstreamQuotaPerDay?: number;
  /** Lifetime of the tokens issued to it; undefined: GATEWAY_TOKEN_TTL_SECONDS. */
  tokenTtlSeconds?: number;
  /** Searches per clock minute; undefined: CLIENT_RATE_PER_MINUTE. */
  ratePerMinute?: number;
  /** Who the client is at a trusted issuer: a token of the issuer naming `subject` is the client's. */
  identities?: { issuer: string; subject: string }[];
  /** The client certificates it is known by (certificates/certificate-index.ts). */
  certificates?: CertificateSelector[];
}

const secret = z.strictObject({
  hash: z.string().check(z.regex(/^sha256:[0-9a-f]{64}$/, 'must be sha256:<64 lowercase hex digits>')),
  not_after: z.optional(z.iso.datetime({ offset: true, error: 'must be an RFC 3339 date-time' })),
});

const client = z.strictObject({
  id: z.string().check(z.regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1-64 of A-Z a-z 0-9 . _ -')),
  secrets: z.optional(z.array(secret).check(z.minLength(1, 'must list at least one secret'))),
  admin: z.optional(z.boolean()),
  upstream_quota_per_day: z.optional(z.int().check(z.minimum(0), z.maximum(1_000_000_000))),
  token_ttl_seconds: z.optional(z.int().check(z.minimum(60), z.maximum(31_536_000))),
  rate_per_minute: z.optional(z.int().check(z.minimum(1), z.maximum(10_000_000))),
  identities: z.optional(z.array(IDENTITY_SCHEMA).check(z.minLength(1, 'must list at least one identity'))),
  certificates: z.optional(z.array(CERTIFICATE_SELECTOR).check(z.maxLength(100))),
});

/** The file's schema: `{"clients": [...], "issuers": [...]}`. */
export const CLIENTS_FILE_SCHEMA = z.strictObject({
  clients: z.array(client),
  issuers: z.optional(z.array(ISSUER_SCHEMA)),
});

type ClientsFile = z.infer<typeof CLIENTS_FILE_SCHEMA>;

/** `clients[1].secrets[0].hash` from a validation issue's path. */
function fieldOf(path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (text, part) => (typeof part === 'number' ? `${text}[${part}]` : text ? `${text}.${String(part)}` : String(part)),
    '',
  );
}

const KINDS: Record<string, string> = {
  object: 'an object',
  array: 'an array',
  string: 'a string',
  boolean: 'true or false',
  number: 'a number',
  int: 'a whole number',
};

/** What is wrong, in words, where the schema gives no message of its own (zod/mini's own is "Invalid input"). */
function explain(issue: z.core.$ZodRawIssue): string | undefined {
  switch (issue.code) {
    case 'invalid_type':
      return issue.input === undefined ? 'is missing' : `must be ${KINDS[issue.expected] ?? issue.expected}`;
    case 'too_small':
      return issue.origin === 'array'
        ? `must list at least ${String(issue.minimum)}`
        : `must be at least ${String(issue.minimum)}`;
    case 'too_big':
      return `must be at most ${String(issue.maximum)}`;
    case 'unrecognized_keys':
      return 'has a field the clients file does not define (config/clients-file.schema.json)';
    default:
      return undefined;
  }
}

function entryOf(c: ClientsFile['clients'][number]): ClientEntry {
  return {
    id: c.id,
    secrets: (c.secrets ?? []).map((s) => ({
      sha256: s.hash.slice('sha256:'.length),
      ...(s.not_after === undefined ? {} : { notAfter: Date.parse(s.not_after) }),
    })),
    admin: c.admin ?? false,
    ...(c.upstream_quota_per_day === undefined ? {} : { upstreamQuotaPerDay: c.upstream_quota_per_day }),
    ...(c.token_ttl_seconds === undefined ? {} : { tokenTtlSeconds: c.token_ttl_seconds }),
    ...(c.rate_per_minute === undefined ? {} : { ratePerMinute: c.rate_per_minute }),
    ...(c.identities === undefined ? {} : { identities: c.identities }),
    ...(c.certificates === undefined ? {} : { certificates: c.certificates }),
  };
}

/** What a clients file holds: its clients, and the issuers whose tokens name some of them. */
export interface ClientsFileContents {
  clients: ClientEntry[];
  issuers: TrustedIssuer[];
}

/**
 * Reads a clients file: its entries, or the one problem to name (`field: what is wrong`). `reserved` are ids the
 * gateway keeps for itself.
 */
export function readClientsFile(
  text: string,
  reserved: readonly string[],
): ({ ok: true } & ClientsFileContents) | { ok: false; problem: string } {
  const json = readJsonText(text);
  if (!json.ok) return json;
  const parsed = CLIENTS_FILE_SCHEMA.safeParse(json.value, { error: explain });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    // An unknown field is named by its place alone: its name is the file's content.
    const place =
      issue.code === 'unrecognized_keys' ? json.placeOfKey(issue.path, issue.keys[0]!) : json.placeOf(issue.path);
    return { ok: false, problem: `${fieldOf(issue.path) || '(top level)'}: ${issue.message} (at ${place})` };
  }
  const seen = new Set<string>();
  for (const [i, c] of parsed.data.clients.entries()) {
    if (seen.has(c.id)) return { ok: false, problem: `clients[${i}].id: "${c.id}" appears twice` };
    if (reserved.includes(c.id))
      return { ok: false, problem: `clients[${i}].id: "${c.id}" is an id the gateway reserves for itself` };
    if (c.secrets === undefined && c.identities === undefined && c.certificates === undefined)
      return { ok: false, problem: `clients[${i}]: must list secrets, identities or certificates` };
    seen.add(c.id);
  }
  const issuers = parsed.data.issuers ?? [];
  const problem = federationProblem(issuers, parsed.data.clients) ?? certificateClash(parsed.data.clients);
  if (problem !== undefined) return { ok: false, problem };
  return { ok: true, clients: parsed.data.clients.map(entryOf), issuers: issuers.map(trustedIssuerOf) };
}
