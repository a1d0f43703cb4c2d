import { ReplyError as IoredisReplyError } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { redisFailureCause, stopsServing } from './failure-cause.js';

/** ioredis's own error for an error reply (typed `any` by ioredis). */
const ReplyError = IoredisReplyError as new (message: string) => Error;

describe('stopsServing', () => {
  it.each([
    'LOADING Redis is loading the dataset in memory',
    "READONLY You can't write against a read only replica.",
    'CLUSTERDOWN The cluster is down',
    'MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to no',
    'TRYAGAIN Multiple keys request during rehashing of slot',
    'NOAUTH Authentication required.',
    'NOPERM this user has no permissions to run the command',
    'BUSY Redis is busy running a script.',
  ])('counts the reply %j as Redis not serving', (message) => {
    expect(stopsServing(new ReplyError(message))).toBe(true);
  });

  it.each([
    'WRONGTYPE Operation against a key holding the wrong kind of value',
    'ERR Error running script (call to f_0123): @user_script:1: user_script:1: bad argument',
    'ERR unknown command, READONLY later in the text',
  ])('counts the reply %j as about one command only', (message) => {
    expect(stopsServing(new ReplyError(message))).toBe(false);
  });

  it('counts a timeout, a closed connection and anything not an Error as Redis not serving', () => {
    expect(stopsServing(new Error('Command timed out'))).toBe(true);
    expect(stopsServing(new Error('Connection is closed.'))).toBe(true);
    expect(stopsServing('gone')).toBe(true);
  });
});

describe('redisFailureCause', () => {
  it.each([
    ['ERR No such master with that name', 'unknown_master'],
    ['ERR This instance has cluster support disabled', 'not_cluster'],
    ['WRONGPASS invalid username-password pair or user is disabled.', 'password_refused'],
    ['failed to connect to sentinel 127.0.0.1:26379 because WRONGPASS invalid password', 'sentinel_password_refused'],
    ['connect ECONNREFUSED 127.0.0.1:6379', 'unreachable'],
  ])('reads %j as %s', (message, cause) => {
    expect(redisFailureCause(new Error(message))).toBe(cause);
  });

  it("reads a Cluster's failure by the last node's own reply", () => {
    const err = Object.assign(new Error('Failed to refresh slots cache.'), {
      lastNodeError: new ReplyError('ERR This instance has cluster support disabled'),
    });
    expect(redisFailureCause(err)).toBe('not_cluster');
  });
});
