// The gateway's own clients and tokens (docs/configuration.md, "Clients"): who may call, their secrets' hashes or
// the clients file, the admin clients, the gateway tokens' keys and lifetime, the revocation list's bounds, the login
// throttle; and the checks across them.
import * as z from 'zod/mini';
import {
  commaList,
  idList,
  int,
  optionalText,
  setting,
  type ConfigProblem,
  type SettingValues,
} from './settings-table.js';

/**
 * Caller ids the gateway uses for itself: `console` (the web console's searches, its quota and metrics label) and
 * `gateway` (reads that name no caller). A registered client under one of them would spend their budgets.
 */
export const RESERVED_CLIENT_IDS: readonly string[] = ['console', 'gateway'];

const clientList = z.pipe(
  z.optional(z.string()),
  z.transform((v, ctx) => {
    const clients = new Map<string, string>();
    for (const entry of commaList(v)) {
      const m = /^([A-Za-z0-9._-]{1,64}):([0-9a-fA-F]{64})$/.exec(entry);
      if (!m) {
        ctx.issues.push({ code: 'custom', message: 'each entry must be id:sha256hex (64 hex digits)', input: v });
        return z.NEVER;
      }
      if (clients.has(m[1]!)) {
        ctx.issues.push({ code: 'custom', message: `client id "${m[1]}" appears twice`, input: v });
        return z.NEVER;
      }
      clients.set(m[1]!, m[2]!.toLowerCase());
    }
    return clients;
  }),
);

const secretKey = z
  .string()
  .check(z.refine((v) => new TextEncoder().encode(v).length >= 32, 'must be at least 32 bytes'));

export const CLIENT_SETTINGS = {
  gatewayTokens: {
    /** Undefined only in demo mode before the runtime fills it in. */
    secret: setting('GATEWAY_TOKEN_SECRET', z.optional(secretKey)),
    previousSecrets: setting('GATEWAY_TOKEN_PREVIOUS_SECRETS', z.pipe(idList, z.array(secretKey))),
    ttlSeconds: setting('GATEWAY_TOKEN_TTL_SECONDS', int(60, 31_536_000, 90_000)),
  },
  /** How many single-token revocations the list holds (docs/security.md): per client, and in total. */
  revocations: {
    perClient: setting('REVOCATIONS_PER_CLIENT_MAX', int(1, 5000, 1000)),
    total: setting('REVOCATIONS_MAX', int(1, 1_000_000, 20_000)),
  },
  /** Client id to lowercase hex SHA-256 of its secret. */
  clients: setting('GATEWAY_CLIENTS', clientList),
  /** Path of the clients file (JSON, config/clients-file.schema.json) on Node, read by the runtime; instead of GATEWAY_CLIENTS. */
  clientsFile: setting('GATEWAY_CLIENTS_FILE', optionalText),
  /**
   * A bigger clients file is refused (at start, or on reload with the last good clients kept) and not read past this.
   * Reading one at the bound (well over a thousand clients) holds the event loop 10-20 ms; one of 1 MiB 100-300 ms.
   */
  clientsFileMaxBytes: setting('GATEWAY_CLIENTS_FILE_MAX_BYTES', int(1024, 64 * 1024 ** 2, 256 * 1024)),
  adminClients: setting(
    'GATEWAY_ADMIN_CLIENTS',
    z.pipe(
      idList,
      z.transform((ids) => new Set(ids)),
    ),
  ),
  login: {
    failuresPerClient: setting('LOGIN_FAILURES_PER_CLIENT', int(1, 10_000, 5)),
    failuresPerAddress: setting('LOGIN_FAILURES_PER_ADDRESS', int(1, 100_000, 20)),
    failureWindowSeconds: setting('LOGIN_FAILURE_WINDOW_SECONDS', int(1, 86_400, 900)),
  },
};

/** The clients come from one place: the file, or GATEWAY_CLIENTS and GATEWAY_ADMIN_CLIENTS. */
export function clientSourceConflicts(v: SettingValues<typeof CLIENT_SETTINGS>): ConfigProblem[] {
  if (v.clientsFile === undefined) return [];
  const also = (
    [
      ['GATEWAY_CLIENTS', v.clients.size > 0],
      ['GATEWAY_ADMIN_CLIENTS', v.adminClients.size > 0],
    ] as const
  ).filter(([, set]) => set);
  return also.map(([variable]) => ({
    variable,
    problem: 'is set beside GATEWAY_CLIENTS_FILE: give every client and its admin flag in the file alone',
  }));
}
