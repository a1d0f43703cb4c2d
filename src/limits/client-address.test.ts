import { describe, expect, it } from 'vitest';
import { canonicalAddress, clientAddress } from './client-address.js';

describe('clientAddress', () => {
  it('ignores X-Forwarded-For without trusted proxies', () => {
    expect(clientAddress('192.0.2.10', '198.51.100.7', 0)).toBe('192.0.2.10');
  });

  it('takes the Nth entry from the right with N trusted proxies', () => {
    expect(clientAddress('10.0.0.2', '6.6.6.6, 198.51.100.7', 1)).toBe('198.51.100.7');
    expect(clientAddress('10.0.0.2', '6.6.6.6, 198.51.100.7, 10.0.0.1', 2)).toBe('198.51.100.7');
  });

  it('falls back to the leftmost entry when there are fewer entries than trusted proxies', () => {
    expect(clientAddress('10.0.0.2', '198.51.100.7', 3)).toBe('198.51.100.7');
  });

  it('uses the peer when a trusted proxy sent no X-Forwarded-For', () => {
    expect(clientAddress('10.0.0.2', undefined, 1)).toBe('10.0.0.2');
    expect(clientAddress('10.0.0.2', ' , ', 1)).toBe('10.0.0.2');
  });
});

describe('canonicalAddress', () => {
  it('unwraps IPv4-mapped IPv6 and ports', () => {
    expect(canonicalAddress('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(canonicalAddress('192.0.2.1:5555')).toBe('192.0.2.1');
    expect(canonicalAddress('[2001:db8::1]:443')).toBe('2001:db8:0:0::/64');
  });

  it('counts an IPv6 client by its /64', () => {
    expect(canonicalAddress('2001:db8:1:2:aaaa::1')).toBe(canonicalAddress('2001:DB8:1:2:bbbb:cccc:dddd:eeee'));
    expect(canonicalAddress('2001:db8:1:2::1')).not.toBe(canonicalAddress('2001:db8:1:3::1'));
  });
});
