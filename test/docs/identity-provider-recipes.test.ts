// Every clients file docs/identity-providers.md gives an operator to copy is one the gateway reads, with the issuers
// and identities it shows.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readClientsFile } from '../../src/auth/clients-file.js';

const doc = readFileSync(new URL('../../docs/identity-providers.md', import.meta.url), 'utf8');
const blocks = [...doc.matchAll(/^```json\n([\s\S]*?)^```/gm)].map((m) => m[1]!);

describe("docs/identity-providers.md's clients files", () => {
  it('are read by the gateway, each identity naming one of its issuers', () => {
    expect(blocks.length).toBe(6);
    for (const text of blocks) {
      const read = readClientsFile(text, []);
      expect(read, text).toMatchObject({ ok: true });
      if (!read.ok) continue;
      expect(read.issuers.length).toBeGreaterThan(0);
      expect(read.clients.flatMap((c) => c.identities ?? []).length).toBeGreaterThan(0);
    }
  });
});
