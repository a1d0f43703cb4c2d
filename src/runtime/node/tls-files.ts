// The HTTPS listener's files (TLS_CERT_FILE, TLS_KEY_FILE, TLS_CLIENT_CA_FILE, TLS_CLIENT_CRL_FILE): read at start (a
// missing or wrong file stops the start with one line naming its setting), then looked at once a second and, when any
// changed (cert-manager's renewal, a Secret's symlink swap), read again and handed to the server's setSecureContext:
// new connections get the new certificate, open ones keep theirs. A set that does not load (a key written before its
// certificate) is logged and tried again at the next change; the last good one stays.
import { stat, readFile } from 'node:fs/promises';
import { createSecureContext, type SecureContextOptions, type Server as TlsServer } from 'node:tls';
import type { Config } from '../../config/config.js';
import { ConfigError } from '../../config/config.js';
import type { Logger } from '../../observability/logger.js';

/** The largest file read: a chain or a CA bundle is a few KiB, a CRL of a big CA a few hundred. */
const MAX_FILE_BYTES = 4 * 1024 * 1024;
const POLL_MS = 1000;

type TlsConfig = Config['tls'];

/** The files of an HTTPS listener, by their setting. */
const filesOf = (tls: TlsConfig): [string, string][] => {
  const files: [string, string | undefined][] = [
    ['TLS_CERT_FILE', tls.certFile],
    ['TLS_KEY_FILE', tls.keyFile],
    ['TLS_CLIENT_CA_FILE', tls.clientCaFile],
    ['TLS_CLIENT_CRL_FILE', tls.clientCrlFile],
  ];
  return files.filter((entry): entry is [string, string] => entry[1] !== undefined);
};

async function readBounded(setting: string, path: string): Promise<Buffer> {
  const info = await stat(path).catch((err: NodeJS.ErrnoException) => {
    throw new ConfigError(setting, `${path}: cannot be read (${err.code ?? 'error'})`);
  });
  if (!info.isFile()) throw new ConfigError(setting, `${path}: is not a regular file`);
  if (info.size > MAX_FILE_BYTES) throw new ConfigError(setting, `${path}: is larger than ${MAX_FILE_BYTES} bytes`);
  return readFile(path);
}

/** Each PEM block of a file: Node reads one CRL per string, and a CA with intermediates has one CRL for each. */
const pemBlocks = (pem: Buffer): string[] =>
  pem.toString('latin1').match(/-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g) ?? [];

/** The secure context's options from the files; a {@link ConfigError} naming the setting whose file is wrong. */
async function secureOptionsOf(tls: TlsConfig): Promise<SecureContextOptions> {
  const read = Object.fromEntries(
    await Promise.all(filesOf(tls).map(async ([setting, path]) => [setting, await readBounded(setting, path)])),
  ) as Record<string, Buffer | undefined>;
  const options: SecureContextOptions = {
    cert: read.TLS_CERT_FILE,
    key: read.TLS_KEY_FILE,
    ...(read.TLS_CLIENT_CA_FILE ? { ca: read.TLS_CLIENT_CA_FILE } : {}),
    ...(read.TLS_CLIENT_CRL_FILE ? { crl: pemBlocks(read.TLS_CLIENT_CRL_FILE) } : {}),
  };
  try {
    createSecureContext(options);
  } catch (err) {
    // OpenSSL's reason names the part (a key that does not match, a PEM without a certificate), not the content.
    throw new ConfigError(
      'TLS_CERT_FILE',
      `the certificate, key, CA or CRL files do not load: ${(err as Error).message}`,
    );
  }
  return options;
}

/** What the HTTPS server is created with: the files' contents, and client certificates asked for with a CA. */
export async function httpsOptionsOf(tls: TlsConfig) {
  const secure = await secureOptionsOf(tls);
  // Asked for, not required: a caller without one still reaches the routes that take a token, Basic or none;
  // whether one was verified is read per request (tls-peer-certificate.ts).
  return { ...secure, requestCert: secure.ca !== undefined, rejectUnauthorized: false };
}

/** A file's identity and state: a change of any (a rewrite, a symlink swap) is a change of the file. */
const signatureOf = async (paths: string[]): Promise<string> =>
  (
    await Promise.all(
      paths.map((path) =>
        stat(path).then(
          (s) => `${s.ino}:${s.size}:${s.mtimeMs}`,
          () => 'missing',
        ),
      ),
    )
  ).join('|');

/** Re-reads the files when they change and gives new connections the new context; `close` stops looking. */
export function watchTlsFiles(server: TlsServer, tls: TlsConfig, logger: Logger, pollMs = POLL_MS) {
  const paths = filesOf(tls).map(([, path]) => path);
  let last: Promise<string> = signatureOf(paths);
  let busy = false;
  const look = async () => {
    const [before, now] = [await last, await signatureOf(paths)];
    if (now === before) return;
    try {
      server.setSecureContext(await secureOptionsOf(tls));
      last = Promise.resolve(now);
      logger.info({ event: 'tls_reloaded' }, 'TLS certificate files read again: new connections use them');
    } catch (err) {
      // Kept as changed-but-not-applied: the next change of any file tries again.
      last = Promise.resolve(now);
      logger.error(
        { event: 'tls_reload_refused', problem: (err as Error).message },
        'TLS files not applied: the last good certificate stays',
      );
    }
  };
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    void look().finally(() => (busy = false));
  }, pollMs);
  timer.unref();
  return { close: () => clearInterval(timer) };
}
