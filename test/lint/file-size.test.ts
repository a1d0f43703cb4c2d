// No source file in src/ over 400 lines but the named data tables: a file that long holds two concerns or more.
// The same check runs on a small planted tree, so it is seen to fail, naming the file.
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const MAX_LINES = 400;
/** Long for what they list, not for what they do. */
const DATA_TABLES = new Set(['src/docs/openapi-schemas.ts']);

const isSource = (path: string): boolean => /\.tsx?$/.test(path) && !/\.test\.tsx?$/.test(path);
/** As `wc -l` counts them, plus a last line without its newline. */
const linesOf = (text: string): number => (text === '' ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0));

/** `path: N lines` for each source file under `root`/src over the bound, data tables aside. */
async function oversized(root: string): Promise<string[]> {
  const paths = (await readdir(join(root, 'src'), { recursive: true }))
    .map((path) => join('src', path).split('\\').join('/'))
    .filter((path) => isSource(path) && !DATA_TABLES.has(path))
    .sort();
  const found: string[] = [];
  for (const path of paths) {
    const lines = linesOf(await readFile(join(root, path), 'utf8'));
    if (lines > MAX_LINES) found.push(`${path}: ${lines} lines`);
  }
  return found;
}

const temporary: string[] = [];
afterAll(async () => {
  await Promise.all(temporary.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function plant(tree: Record<string, number>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'file-size-'));
  temporary.push(root);
  for (const [path, lines] of Object.entries(tree)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), 'export const line = 1;\n'.repeat(lines));
  }
  return root;
}

describe('source file size', () => {
  it(`finds no source file in src/ over ${MAX_LINES} lines but the named data tables`, async () => {
    expect(await oversized(ROOT)).toEqual([]);
  });

  it('names a planted source file one line over, and leaves alone one at the bound, a test and a data table', async () => {
    const root = await plant({
      'src/lookup/long-file.ts': MAX_LINES + 1,
      'src/operations/console/page.tsx': MAX_LINES + 2,
      'src/lookup/at-the-bound.ts': MAX_LINES,
      'src/lookup/long-file.test.ts': 2 * MAX_LINES,
      'src/docs/openapi-schemas.ts': 2 * MAX_LINES,
    });
    expect(await oversized(root)).toEqual([
      `src/lookup/long-file.ts: ${MAX_LINES + 1} lines`,
      `src/operations/console/page.tsx: ${MAX_LINES + 2} lines`,
    ]);
  });

  it('excepts only data tables that exist', async () => {
    for (const path of DATA_TABLES) expect((await stat(join(ROOT, path))).isFile(), path).toBe(true);
  });
});
