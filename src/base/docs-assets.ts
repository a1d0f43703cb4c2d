// Swagger UI's own files for /docs: what the runtime serves them through (Node reads the swagger-ui-dist package;
// Workers has no such port, and /docs says so).

export const SWAGGER_UI_FILES = ['swagger-ui-bundle.js', 'swagger-ui.css'] as const;
export type SwaggerUiFile = (typeof SWAGGER_UI_FILES)[number];

/** Swagger UI's files, read by the runtime from the swagger-ui-dist package (Node); absent where it cannot (Workers). */
export interface DocsAssets {
  get(file: SwaggerUiFile): Promise<{ body: string; contentType: string }>;
}
