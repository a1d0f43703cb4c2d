// The access-log line the request recorder serialises itself (the hot path's) is the line pino writes for the
// same fields: same keys, same order, same values; and it honours the level.
import { describe, expect, it } from 'vitest';
import { createKeyedHasher } from '../../observability/keyed-hash.js';
import { createRequestRecorder, type FinishedRequest } from '../../observability/request-recorder.js';
import { createIsoTime, createNodeLogger } from './node-logger.js';
import { createHmac } from 'node:crypto';

function capture() {
  const lines: string[] = [];
  return { lines, stream: { write: (line: string) => lines.push(line) } };
}

const hasher = createKeyedHasher({
  key: 'logger-test-key',
  syncHmac: (key, data) => createHmac('sha256', key).update(data).digest('hex'),
});

const requests: FinishedRequest[] = [
  {
    requestId: 'd51d0218-6412-4013-89c7-7de2b47264b3',
    method: 'GET',
    route: '/v2/contacts/search',
    status: 200,
    elapsedMs: 0.123456,
    clientId: 'crm',
    lookup: { e164: '+442079460010', cache: 'hit' },
  },
  { requestId: 'rid_"odd"\\', method: 'POST', route: '/token/login', status: 401, elapsedMs: 12 },
  { requestId: 'r3', method: 'GET', route: '/v2/contacts/search', status: 502, elapsedMs: 3, clientId: 'ü "x"' },
];

/** A line without its time, which differs by the millisecond. */
const withoutTime = (line: string) => line.replace(/"time":"[^"]+",/, '');

describe('the Node logger', () => {
  it('writes the recorder’s own access-log line exactly as pino writes the same fields', () => {
    const fast = capture();
    const viaPino = capture();
    const fastLogger = createNodeLogger('info', fast.stream);
    const pinoLogger = createNodeLogger('info', viaPino.stream);
    // The general path: the same logger without its json method.
    const { json: _json, ...general } = pinoLogger;
    expect(typeof fastLogger.json).toBe('function');
    const recordFast = createRequestRecorder({ logger: fastLogger, hasher });
    const recordPino = createRequestRecorder({ logger: general, hasher });
    for (const r of requests) {
      recordFast(r);
      recordPino(r);
    }
    expect(fast.lines).toHaveLength(requests.length);
    expect(fast.lines.map(withoutTime)).toEqual(viaPino.lines.map(withoutTime));
    for (const line of fast.lines) {
      expect(line.endsWith('}\n')).toBe(true);
      expect(JSON.parse(line)).toMatchObject({ service: 'callerid-gateway', event: 'request', msg: 'request' });
    }
    expect(JSON.parse(fast.lines[0]!)).toMatchObject({ level: 'info', durationMs: 0.123, cache: 'hit' });
    expect(JSON.parse(fast.lines[2]!)).toMatchObject({ level: 'warn', clientId: 'ü "x"' });
  });

  it('writes no json line below its level', () => {
    const out = capture();
    const logger = createNodeLogger('warn', out.stream);
    logger.json?.('info', '"event":"request"', 'request');
    logger.json?.('warn', '"event":"request"', 'request');
    expect(out.lines).toHaveLength(1);
    expect(JSON.parse(out.lines[0]!)).toMatchObject({ level: 'warn', event: 'request', msg: 'request' });
  });

  it('writes the time as toISOString does, across seconds, days and years', () => {
    const iso = createIsoTime();
    const times = [0, 1, 9, 10, 99, 100, 999, 1000, 1001, Date.UTC(2026, 10, 25, 23, 59, 59, 999)];
    times.push(times.at(-1)! + 1, Date.UTC(1969, 11, 31, 23, 59, 59, 5), Date.UTC(10000, 0, 1), -1);
    // A walk in small steps, as lines come, and jumps back and forth.
    for (let t = Date.UTC(2026, 0, 1), i = 0; i < 5000; i++, t += (i * 7919) % 1500) times.push(t, t - 3000);
    for (const t of times) expect(iso(t)).toBe(new Date(t).toISOString());
  });
});
