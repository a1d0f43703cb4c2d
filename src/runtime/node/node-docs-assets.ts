// Swagger UI's files for /docs on Node, read from the installed swagger-ui-dist package on first use and kept
// in memory: the gateway serves them itself, so the docs page needs no third-party host.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { DocsAssets, SwaggerUiFile } from '../../base/docs-assets.js';

const CONTENT_TYPES: Record<SwaggerUiFile, string> = {
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
};

export function createNodeDocsAssets(): DocsAssets {
  const dir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const loaded = new Map<SwaggerUiFile, Promise<{ body: string; contentType: string }>>();
  return {
    get(file) {
      let asset = loaded.get(file);
      if (asset === undefined) {
        asset = readFile(join(dir, file), 'utf8').then((body) => ({ body, contentType: CONTENT_TYPES[file] }));
        // A failed read is not kept: the next request tries again.
        asset.catch(() => loaded.delete(file));
        loaded.set(file, asset);
      }
      return asset;
    },
  };
}
