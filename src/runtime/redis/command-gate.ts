// The gate that fails every command at once while Redis is known not to answer, and the PING that opens it again.
import { Command } from 'ioredis';
import { stopsServing } from './failure-cause.js';
import type { RedisClient } from './redis-connection.js';

type Send = (command: Command, ...rest: unknown[]) => unknown;

interface Gate {
  client: RedisClient;
  /** The client's own sendCommand. */
  send: Send;
  retryAfterMs: number;
  /** Redis failed a command and no PING has been answered since: commands fail at once. */
  closed: boolean;
  /** Set by the client's close(): no more PINGs. */
  stopped: boolean;
  probing: boolean;
  probe: ReturnType<typeof setTimeout> | undefined;
  /** Sent through the gate and not answered yet. */
  waiting: Set<Command>;
}

/**
 * Makes every command on `client` fail at once while Redis is known not to answer: the first failure (a timeout, a
 * closed connection, a failover reply) closes the gate and fails the commands already waiting for an answer, and a
 * PING every `retryAfterMs` in the background opens it again. A hung Redis thus costs a request one timeout at most,
 * whichever store sends its commands and however they interleave: a command sent just before the first timeout
 * (e.g. the next one of a request whose store gave up on its own timer a moment earlier) does not wait out its own.
 */
export function gateCommands(client: RedisClient, retryAfterMs: number): { close(): void } {
  const gate: Gate = {
    client,
    send: client.sendCommand.bind(client) as Send,
    retryAfterMs,
    closed: false,
    stopped: false,
    probing: false,
    probe: undefined,
    waiting: new Set(),
  };
  (client as { sendCommand: Send }).sendCommand = (command, ...rest) => sendThrough(gate, command, rest);
  // (Re)connected: it answered the ready check just now.
  client.on('ready', () => {
    gate.closed = false;
  });
  return {
    close() {
      gate.stopped = true;
      clearTimeout(gate.probe);
    },
  };
}

function sendThrough(gate: Gate, command: Command, rest: unknown[]): unknown {
  // Not ready: the client's own connection set-up (INFO, AUTH) goes through; ioredis refuses anything else.
  if (gate.closed && gate.client.status === 'ready') {
    command.reject(new Error('redis failed less than a retry interval ago; asking again in the background'));
    return command.promise;
  }
  const result = gate.send(command, ...rest);
  gate.waiting.add(command);
  command.promise.then(
    () => gate.waiting.delete(command),
    (err: unknown) => {
      gate.waiting.delete(command);
      if (stopsServing(err)) trip(gate, err);
    },
  );
  return result;
}

function trip(gate: Gate, err: unknown): void {
  if (gate.closed) return;
  gate.closed = true;
  const reason = err instanceof Error ? err.message.slice(0, 200) : 'unknown';
  // An answer that comes later for one of them is dropped by ioredis, as after its own timeout.
  for (const command of gate.waiting)
    command.reject(new Error(`redis failed another command (${reason}); not waiting for this one`));
  gate.waiting.clear();
  schedulePing(gate);
}

/** One PING at a time, until one is answered. */
function schedulePing(gate: Gate): void {
  if (gate.stopped || gate.probing) return;
  gate.probing = true;
  gate.probe = setTimeout(() => {
    const ping = new Command('ping');
    gate.send(ping);
    ping.promise.then(
      () => {
        gate.probing = false;
        gate.closed = false;
      },
      () => {
        gate.probing = false;
        if (gate.closed) schedulePing(gate);
      },
    );
  }, gate.retryAfterMs);
  gate.probe.unref();
}
