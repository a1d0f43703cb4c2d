// The simulator served on a real loopback port, driven with global fetch.
import { describe, it, expect } from 'vitest';
import { startSimulatorServer } from '../../src/simulator/server.js';
import { SAMPLE_NUMBERS } from '../../src/simulator/directory.js';

describe('startSimulatorServer', () => {
  it('serves a token and a search on a free loopback port, then closes despite keep-alive', async () => {
    const server = await startSimulatorServer({ clients: { 'it-client': 'it-secret' } });
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(server.port).toBeGreaterThan(0);

      const tokenRes = await fetch(`${server.url}/token/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: 'it-client',
          client_secret: 'it-secret',
        }),
      });
      expect(tokenRes.status).toBe(200);
      const { access_token } = (await tokenRes.json()) as { access_token: string };

      const what = SAMPLE_NUMBERS.bothProviders[0];
      const searchRes = await fetch(`${server.url}/v2/contacts/search?what=${encodeURIComponent(what)}`, {
        headers: { Authorization: `Bearer ${access_token}` },
      });
      expect(searchRes.status).toBe(200);
      expect(((await searchRes.json()) as { total: number }).total).toBe(2);
      expect(server.controls.stats().authorizationsSeen).toEqual([`Bearer ${access_token}`]);
    } finally {
      await server.close();
    }
    await expect(fetch(`${server.url}/v2/contacts/search?what=x`)).rejects.toThrow();
  });
});
