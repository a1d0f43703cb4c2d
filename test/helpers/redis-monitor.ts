// Every command a Redis server runs, as its MONITOR shows them, read over a socket of the test's own: ioredis's
// monitor() can take a command's line for its own MONITOR reply when the server is busy ("Command queue state
// error"), so the stream is read here, one line at a time.
import { connect, type Socket } from 'node:net';

export interface RedisMonitor {
  /** Each command the server ran since MONITOR began, as its arguments (the command's name first, as sent). */
  readonly commands: string[][];
  close(): void;
}

/** `"a" "b\"c"` → ['a', 'b"c']: MONITOR quotes each argument and escapes `\\`, `\"`, `\n`, `\r`, `\t` and `\xHH`. */
function monitorArguments(line: string): string[] {
  const args: string[] = [];
  for (const m of line.matchAll(/"((?:[^"\\]|\\.)*)"/g))
    args.push(
      m[1]!.replace(/\\(x[0-9a-f]{2}|.)/g, (_, e: string) =>
        e.length === 3 ? String.fromCharCode(parseInt(e.slice(1), 16)) : ({ n: '\n', r: '\r', t: '\t' }[e] ?? e),
      ),
    );
  return args;
}

/** Resolves once the server has answered MONITOR with +OK: every command after that is in `commands`. */
export function monitorRedis(url: string): Promise<RedisMonitor> {
  const { hostname, port } = new URL(url);
  const socket: Socket = connect(Number(port), hostname);
  const commands: string[][] = [];
  let pending = '';
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.once('connect', () => socket.write('MONITOR\r\n'));
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      const lines = (pending + chunk).split('\r\n');
      pending = lines.pop()!;
      for (const line of lines) {
        if (line === '+OK') resolve({ commands, close: () => socket.destroy() });
        else if (line.startsWith('+')) commands.push(monitorArguments(line));
        else if (line.startsWith('-')) reject(new Error(`MONITOR refused: ${line.slice(1)}`));
      }
    });
  });
}
