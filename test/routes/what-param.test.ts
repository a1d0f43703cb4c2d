// The one reader of `what`: it reads the value as Hono's query() does, and counts every spelling of the name.
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { whatParam } from '../../src/routes/what-param.js';

const hono = new Hono().get('/s', (c) => c.json({ what: c.req.query('what') ?? null }));
const honoReads = async (query: string) =>
  ((await (await hono.request(`http://x/s?${query}`)).json()) as { what: string | null }).what ?? undefined;

describe('whatParam', () => {
  it.each([
    'what=%2B44%20161%20496%200001',
    'what=0161+496+0001',
    'what=%E0%A4%A',
    'what=',
    'what',
    'a=1&what=2&b=3',
    'wh%61t=42',
    '%77hat=7',
    'what=1%26x=2',
    'x=%zz&what=5',
    'WHAT=9',
    'whatever=1',
    '',
  ])('reads %j as Hono does', async (query) => {
    expect(whatParam(query).value).toBe(await honoReads(query));
  });

  it('counts every spelling of the name, and no other name', () => {
    expect(whatParam('what=1&what=2').count).toBe(2);
    expect(whatParam('what=1&WHAT=2').count).toBe(2);
    expect(whatParam('what=1&wh%61t=2').count).toBe(2);
    expect(whatParam('what=1&what').count).toBe(2);
    expect(whatParam('what=1&Wh%41T').count).toBe(2);
    expect(whatParam('what=1&whatever=2&wha=3&w%68a=4').count).toBe(1);
    expect(whatParam('what=1#&what=2').count).toBe(1);
  });
});
