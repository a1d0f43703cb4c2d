// A real nginx for the tests, from its own config in a temporary directory on a free loopback port (never the system
// service): it terminates TLS, asks for a client certificate and forwards it to a gateway as a URL-encoded PEM.
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { freePort } from './free-port.js';
import { commandRequirement, type Requirement } from './requires.js';

export const nginxRequirement = (): Requirement =>
  commandRequirement('nginx', ['-v'], 'the nginx command (apt-get install nginx)');

export interface TlsNginx {
  url: string;
  stop(): Promise<void>;
}

export interface TlsNginxOptions {
  dir: string;
  cert: string;
  key: string;
  clientCa: string;
  /** The gateway's http://host:port. */
  upstream: string;
  /** The header the client certificate is forwarded in. */
  header: string;
  /** The loopback address nginx connects to the gateway from (`proxy_bind`): the one the gateway trusts. */
  bind: string;
}

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });

export async function startTlsNginx(options: TlsNginxOptions): Promise<TlsNginx> {
  const port = await freePort();
  const { dir } = options;
  const conf = `${dir}/nginx.conf`;
  writeFileSync(
    conf,
    `daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/nginx-error.log;
worker_processes 1;
events {}
http {
  access_log off;
  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;
  server {
    listen 127.0.0.1:${port} ssl;
    ssl_certificate ${options.cert};
    ssl_certificate_key ${options.key};
    ssl_client_certificate ${options.clientCa};
    ssl_verify_client optional;
    location / {
      proxy_pass ${options.upstream};
      proxy_bind ${options.bind};
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header ${options.header} $ssl_client_escaped_cert;
    }
  }
}
`,
  );
  const child: ChildProcess = spawn('nginx', ['-c', conf, '-p', dir, '-e', `${dir}/nginx-error.log`], {
    stdio: 'ignore',
  });
  for (let i = 0; i < 100 && !(await listening(port)); i++) await new Promise((r) => setTimeout(r, 50));
  return {
    url: `https://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGQUIT');
      }),
  };
}
