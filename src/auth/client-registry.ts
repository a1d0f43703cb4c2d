// The internal clients allowed to obtain gateway tokens: SHA-256 digests of their secrets (several during a
// rotation, each until its `not_after`), admin or not, quota and token lifetime. Replaced whole when the clients
// file is read again; a client no longer listed is refused at once, its tokens with it.
import type { Clock } from '../base/clock.js';
import type { ClientEntry } from './clients-file.js';
import { identityKey, type TrustedIssuer } from './federated/trusted-issuers.js';
import {
  createCertificateIndex,
  type CertificateIndex,
  type CertificateMatch,
} from './certificates/certificate-index.js';
import type { PeerCertificate } from './certificates/peer-certificate.js';

const encoder = new TextEncoder();

export async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(text)));
  let hex = '';
  for (const byte of digest) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/** Compares two equal-length strings without an early exit, so timing says nothing of where they differ. */
export function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

const UNKNOWN_CLIENT_DIGEST = '0'.repeat(64);

/** The earliest `notAfter` still ahead of `now`, or Infinity. */
function nextRetirement(entries: ReadonlyMap<string, ClientEntry>, now: number): number {
  let next = Number.POSITIVE_INFINITY;
  for (const entry of entries.values())
    for (const s of entry.secrets) if (s.notAfter !== undefined && s.notAfter > now) next = Math.min(next, s.notAfter);
  return next;
}

// A class: the registry's one piece of state (the entries and their version) is replaced as a whole.
export class ClientRegistry {
  private entries: ReadonlyMap<string, ClientEntry>;
  /** The clients file's trusted issuers by URL, and the client of each identity at them. */
  private issuers: ReadonlyMap<string, TrustedIssuer> = new Map();
  private identities: ReadonlyMap<string, string> = new Map();
  private version = 0;
  private retiresAt: number;
  private certificates: CertificateIndex = createCertificateIndex([]);
  /**
   * Daily upstream quotas by caller, kept up to date in place for the cost guard: the fixed ones (the console's),
   * then each client's own or the default, so a client added by a reload is held to a quota too.
   */
  readonly quotas: Map<string, number>;

  constructor(
    entries: readonly ClientEntry[],
    private readonly clock: Clock,
    private readonly quotaDefaults: { fixed: ReadonlyMap<string, number>; perDay: number | undefined } = {
      fixed: new Map(),
      perDay: undefined,
    },
    issuers: readonly TrustedIssuer[] = [],
  ) {
    this.quotas = new Map(quotaDefaults.fixed);
    this.entries = new Map();
    this.retiresAt = Number.POSITIVE_INFINITY;
    this.replace(entries, issuers);
  }

  /**
   * Every client from now on is one of `entries`, and every trusted issuer one of `issuers`; tokens and remembered
   * credentials of others stop working.
   */
  replace(entries: readonly ClientEntry[], issuers: readonly TrustedIssuer[] = []): void {
    this.entries = new Map(entries.map((e) => [e.id, e]));
    this.issuers = new Map(issuers.map((i) => [i.issuer, i]));
    this.identities = new Map(
      entries.flatMap((e) => (e.identities ?? []).map((i) => [identityKey(i.issuer, i.subject), e.id] as const)),
    );
    this.certificates = createCertificateIndex(entries);
    this.retiresAt = nextRetirement(this.entries, this.clock());
    this.version++;
    for (const id of this.quotas.keys()) if (!this.quotaDefaults.fixed.has(id)) this.quotas.delete(id);
    for (const e of entries) {
      const quota = e.upstreamQuotaPerDay ?? this.quotaDefaults.perDay;
      if (quota !== undefined) this.quotas.set(e.id, quota);
    }
  }

  /** True when `secret` is an accepted secret of `clientId` now; takes the same time for unknown ids. */
  async authenticate(clientId: string, secret: string): Promise<boolean> {
    const entry = this.entries.get(clientId);
    const actual = await sha256Hex(secret);
    const now = this.clock();
    let match = false;
    for (const s of entry?.secrets ?? [{ sha256: UNKNOWN_CLIENT_DIGEST }]) {
      const current = s.notAfter === undefined || now < s.notAfter;
      match = constantTimeEqual(actual, s.sha256) && current && entry !== undefined ? true : match;
    }
    return match;
  }

  /** Whether `clientId` is registered: a map lookup, checked on every hit. */
  readonly has = (clientId: string): boolean => this.entries.has(clientId);

  /** The trusted issuer a token's `iss` names, if it names one. */
  readonly trustedIssuer = (iss: string): TrustedIssuer | undefined => this.issuers.get(iss);

  /** The client whose identity at `issuer` is `subject`, if one has it. */
  readonly clientOfIdentity = (issuer: string, subject: string): string | undefined =>
    this.identities.get(identityKey(issuer, subject));
  /** The client a verified certificate is, by the certificates the clients list. */
  readonly certificateClient = (cert: PeerCertificate): CertificateMatch => this.certificates.match(cert);

  readonly isAdmin = (clientId: string): boolean => this.entries.get(clientId)?.admin === true;

  /** Searches per minute `clientId` may make, when the client names its own rate. */
  readonly ratePerMinute = (clientId: string): number | undefined => this.entries.get(clientId)?.ratePerMinute;

  /** Lifetime of tokens issued to `clientId`, when the client names one. */
  tokenTtlSeconds(clientId: string): number | undefined {
    return this.entries.get(clientId)?.tokenTtlSeconds;
  }

  ids(): string[] {
    return [...this.entries.keys()];
  }

  /** The longest lifetime any client's tokens have: how long a client's cut-off must be kept. */
  maxTokenTtlSeconds(defaultTtl: number): number {
    let max = defaultTtl;
    for (const e of this.entries.values()) max = Math.max(max, e.tokenTtlSeconds ?? 0);
    return max;
  }

  /** Changes whenever the accepted secrets change (a reload, a `not_after` passing), so what was found right is checked again. */
  generation(): number {
    const now = this.clock();
    if (now >= this.retiresAt) {
      this.retiresAt = nextRetirement(this.entries, now);
      this.version++;
    }
    return this.version;
  }
}

/** The clients of GATEWAY_CLIENTS, GATEWAY_ADMIN_CLIENTS and CLIENT_UPSTREAM_QUOTAS, for small set-ups. */
export function clientEntriesOf(
  clients: ReadonlyMap<string, string>,
  admins: ReadonlySet<string>,
  quotas: ReadonlyMap<string, number>,
): ClientEntry[] {
  return [...clients].map(([id, sha256]) => ({
    id,
    secrets: [{ sha256 }],
    admin: admins.has(id),
    ...(quotas.has(id) ? { upstreamQuotaPerDay: quotas.get(id)! } : {}),
  }));
}
