// Checks an HTTP answer against the gateway's OpenAPI document: the path and method are an operation, the status
// one of its responses, the content type one of that response's media types, and the body valid by its schema
// (Ajv, JSON Schema 2020-12 as OpenAPI 3.1 uses it, with the document's own components).
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

interface MediaType {
  schema?: unknown;
}
interface Operation {
  responses: Record<string, { content?: Record<string, MediaType> }>;
}
export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
}

export interface SeenAnswer {
  method: string;
  /** The request path, e.g. `/admin/cache/020%207946%200001`. */
  path: string;
  status: number;
  contentType: string;
  /** The body as text. */
  body: string;
}

const DOC_ID = 'https://callerid-gateway.invalid/openapi.json';
const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

export function createOpenApiChecker(doc: OpenApiDocument) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addFormat('password', true);
  ajv.addSchema({ ...doc, $id: DOC_ID });
  const templates = Object.keys(doc.paths).map((template) => ({
    template,
    pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }));

  /** Returns what does not match the document (empty when the answer is documented exactly). */
  function check(answer: SeenAnswer): string[] {
    const where = `${answer.method} ${answer.path} -> ${answer.status}`;
    const found = templates.find((t) => t.pattern.test(answer.path));
    if (!found) return [`${where}: no documented path`];
    const method = answer.method.toLowerCase();
    const operation = doc.paths[found.template]![method];
    if (!operation) return [`${where}: ${method} not documented on ${found.template}`];
    const status = String(answer.status) in operation.responses ? String(answer.status) : 'default';
    const response = operation.responses[status];
    if (!response)
      return [`${where}: status not documented (documented: ${Object.keys(operation.responses).join(', ')})`];
    const media = answer.contentType.split(';')[0]!.trim().toLowerCase();
    const content = response.content ?? {};
    if (!(media in content))
      return [
        `${where}: content type ${media} not documented (documented: ${Object.keys(content).join(', ') || 'none'})`,
      ];
    if (!media.endsWith('json')) return [];
    const validate = ajv.getSchema(
      `${DOC_ID}#/${pointer('paths', found.template, method, 'responses', status, 'content', media, 'schema')}`,
    );
    if (!validate) return [`${where}: no schema for ${media}`];
    let body: unknown;
    try {
      body = JSON.parse(answer.body);
    } catch {
      return [`${where}: body is not JSON`];
    }
    if (validate(body)) return [];
    return (validate.errors ?? []).map(
      (e) => `${where}: ${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`,
    );
  }

  return { check };
}

/** Reads a fetch answer into what the checker needs (consumes the body). */
export async function seen(method: string, url: string, res: Response): Promise<SeenAnswer> {
  return {
    method,
    path: new URL(url).pathname,
    status: res.status,
    contentType: res.headers.get('content-type') ?? '',
    body: await res.text(),
  };
}
