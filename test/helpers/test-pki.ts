// Certificates made by openssl at test time in a temporary directory (no key is ever committed): CAs, a server
// certificate for 127.0.0.1 and localhost, and client certificates with a subject, SANs, a lifetime, an issuer.
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkRequirement, commandRequirement } from './requires.js';

export const hasOpenssl = (): boolean =>
  checkRequirement(commandRequirement('openssl', ['version'], 'the openssl command (certificates for the TLS tests)'));

export interface Issued {
  cert: string;
  key: string;
  /** Lowercase hex SHA-256 of the DER certificate. */
  sha256: string;
  /** The subject as RFC 4514 writes it (most specific first). */
  subject: string;
}

export interface IssueOptions {
  /** `/O=Example/CN=pbx`, as openssl's -subj takes it. */
  subj: string;
  /** subjectAltName's value: `URI:spiffe://…,DNS:…`. */
  san?: string;
  /** Negative: already expired. */
  days?: number;
  /** The issuing CA's name in this PKI; default `ca`. */
  ca?: string;
  /** Issued as a CA (an intermediate). */
  isCa?: boolean;
}

const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'pipe', 'pipe'] });

export class TestPki {
  readonly dir = mkdtempSync(join(tmpdir(), 'callerid-pki-'));

  path(name: string): string {
    return join(this.dir, name);
  }

  /** A self-signed CA `name` (`name.pem`, `name.key`). */
  ca(name: string, cn = `${name} test CA`): string {
    openssl([
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-days',
      '2',
      '-keyout',
      this.path(`${name}.key`),
      '-out',
      this.path(`${name}.pem`),
      '-subj',
      `/CN=${cn}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ]);
    return this.path(`${name}.pem`);
  }

  /** A certificate `name` issued by a CA of this PKI. */
  issue(name: string, options: IssueOptions): Issued {
    const [cert, key, csr, ext] = ['pem', 'key', 'csr', 'ext'].map((x) => this.path(`${name}.${x}`)) as [
      string,
      string,
      string,
      string,
    ];
    openssl([
      'req',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      key,
      '-out',
      csr,
      '-subj',
      options.subj,
    ]);
    const lines = [options.isCa ? 'basicConstraints=critical,CA:TRUE' : 'basicConstraints=CA:FALSE'];
    if (options.san) lines.push(`subjectAltName=${options.san}`);
    writeFileSync(ext, `${lines.join('\n')}\n`);
    const ca = options.ca ?? 'ca';
    openssl([
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      this.path(`${ca}.pem`),
      '-CAkey',
      this.path(`${ca}.key`),
      '-CAcreateserial',
      '-days',
      String(options.days ?? 2),
      '-extfile',
      ext,
      '-out',
      cert,
    ]);
    const x509 = new X509Certificate(readFileSync(cert));
    return {
      cert,
      key,
      sha256: x509.fingerprint256.replaceAll(':', '').toLowerCase(),
      subject: x509.subject.split('\n').reverse().join(','),
    };
  }

  /** The server certificate for 127.0.0.1 and localhost. */
  server(name = 'server'): Issued {
    return this.issue(name, { subj: '/CN=localhost', san: 'DNS:localhost,IP:127.0.0.1' });
  }

  /** A CRL of CA `ca` revoking `revoked` (`name.crl.pem`), made by `openssl ca` with a database of its own. */
  crl(name: string, ca: string, revoked: Issued[]): string {
    const db = this.path(`${name}.index`);
    writeFileSync(db, '');
    writeFileSync(this.path(`${name}.crlnumber`), '01\n');
    const config = this.path(`${name}.cnf`);
    writeFileSync(
      config,
      [
        '[ca]',
        'default_ca = test',
        '[test]',
        `database = ${db}`,
        `crlnumber = ${this.path(`${name}.crlnumber`)}`,
        `certificate = ${this.path(`${ca}.pem`)}`,
        `private_key = ${this.path(`${ca}.key`)}`,
        'default_md = sha256',
        'default_crl_days = 2',
        '',
      ].join('\n'),
    );
    for (const cert of revoked) openssl(['ca', '-config', config, '-revoke', cert.cert]);
    const out = this.path(`${name}.crl.pem`);
    openssl(['ca', '-config', config, '-gencrl', '-out', out]);
    return out;
  }

  /** A certificate at the end of a chain of `length` certificates below CA `ca` (`name.chain.pem`: leaf first). */
  deepChain(name: string, length: number, options: IssueOptions): { leaf: Issued; chain: string } {
    let issuer = options.ca ?? 'ca';
    const intermediates: string[] = [];
    for (let i = 1; i < length; i++) {
      const inter = `${name}-int${i}`;
      this.issue(inter, { subj: `/CN=${name} intermediate ${i}`, ca: issuer, isCa: true });
      intermediates.unshift(this.read(`${inter}.pem`));
      issuer = inter;
    }
    const leaf = this.issue(name, { ...options, ca: issuer });
    const chain = this.path(`${name}.chain.pem`);
    writeFileSync(chain, [this.read(`${name}.pem`), ...intermediates].join(''));
    return { leaf, chain };
  }

  read(name: string): string {
    return readFileSync(this.path(name), 'utf8');
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
