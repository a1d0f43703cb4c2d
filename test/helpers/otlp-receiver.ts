// An OTLP/HTTP traces receiver on a loopback port for the tests: it decodes `http/protobuf` and `http/json` bodies
// with OpenTelemetry's own definitions (the opentelemetry-proto files under test/fixtures, read by protobufjs),
// refuses anything that does not conform, and hands back the spans in one shape whatever the encoding.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

const PROTO_ROOT = fileURLToPath(new URL('../fixtures/opentelemetry-proto/', import.meta.url));
const REQUEST_TYPE = 'opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  traceState: string;
  name: string;
  /** `Span.SpanKind`: 1 internal, 2 server, 3 client. */
  kind: number;
  startTimeUnixNano: bigint;
  endTimeUnixNano: bigint;
  attributes: Record<string, string | number | boolean>;
  links: { traceId: string; spanId: string }[];
  /** `Status.StatusCode`: 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string };
  serviceName: string;
}

interface ExportRequest {
  contentType: string;
  headers: IncomingMessage['headers'];
  spans: ReceivedSpan[];
}

/** An answer a test scripts in place of the receiver's own: a status and its header fields, no body. */
export interface ScriptedAnswer {
  status: number;
  headers?: Record<string, string>;
}

export interface OtlpReceiverOptions {
  /** The answer to the `n`th request (from 0) when the test scripts one; undefined: decode and answer 200. */
  answer?: (n: number) => ScriptedAnswer | undefined;
  /** The loopback port to listen on; any free one by default. */
  port?: number;
}

export interface OtlpReceiver {
  /** The traces endpoint (`http://127.0.0.1:port/v1/traces`). */
  url: string;
  /** The export requests decoded and answered 200. */
  requests: ExportRequest[];
  /** Every request that arrived, scripted answers included: when (ms since the epoch) and its header fields. */
  arrivals: { at: number; headers: IncomingMessage['headers'] }[];
  spans(): ReceivedSpan[];
  /** Resolves once at least `count` spans arrived. */
  waitForSpans(count: number, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

/** The decoded request as protobufjs's `toObject` gives it (ids as `Id`: bytes, or hex strings in OTLP/JSON). */
interface AnyValueObject {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
}
interface KeyValueObject {
  key: string;
  value?: AnyValueObject;
}
interface LinkObject<Id> {
  traceId: Id;
  spanId: Id;
}
interface SpanObject<Id> extends LinkObject<Id> {
  parentSpanId?: Id;
  traceState?: string;
  name: string;
  kind?: number;
  startTimeUnixNano: string | number;
  endTimeUnixNano: string | number;
  attributes?: KeyValueObject[];
  links?: LinkObject<Id>[];
  status?: { code?: number; message?: string };
}
interface RequestObject<Id> {
  resourceSpans?: {
    resource?: { attributes?: KeyValueObject[] };
    scopeSpans?: { spans?: SpanObject<Id>[] }[];
  }[];
}

const loadRoot = async () => {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => PROTO_ROOT + target;
  await root.load('opentelemetry/proto/collector/trace/v1/trace_service.proto');
  return root.lookupType(REQUEST_TYPE);
};

const hex = (bytes: ArrayLike<number>) => Buffer.from(bytes).toString('hex');
const hexToBase64 = (value: string) => Buffer.from(value, 'hex').toString('base64');

/** Every key of the JSON body is a field of the message type it sits in (by its JSON name), recursively. */
function assertConforms(type: protobuf.Type, json: unknown, path: string): void {
  for (const [key, value] of Object.entries(json as Record<string, unknown>)) {
    const field = type.fields[key] ?? Object.values(type.fields).find((f) => f.name === key);
    if (field === undefined) throw new Error(`${path}.${key} is no field of ${type.fullName}`);
    field.resolve();
    if (!(field.resolvedType instanceof protobuf.Type)) continue;
    for (const item of field.repeated ? (value as unknown[]) : [value])
      assertConforms(field.resolvedType, item, `${path}.${key}`);
  }
}

/** OTLP/JSON writes ids as hex where the protobuf JSON mapping has base64: turned back before decoding. */
function idsToBase64(json: RequestObject<string>): RequestObject<string> {
  for (const rs of json.resourceSpans ?? [])
    for (const ss of rs.scopeSpans ?? [])
      for (const span of ss.spans ?? []) {
        for (const ids of [span, ...(span.links ?? [])]) {
          ids.traceId = hexToBase64(ids.traceId);
          ids.spanId = hexToBase64(ids.spanId);
        }
        if (span.parentSpanId !== undefined) span.parentSpanId = hexToBase64(span.parentSpanId);
      }
  return json;
}

const attributesOf = (list: KeyValueObject[] = []) =>
  Object.fromEntries(
    list.map((kv) => {
      const v = kv.value ?? {};
      const value =
        v.stringValue ?? v.boolValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.doubleValue;
      if (value === undefined) throw new Error(`attribute ${kv.key} has no value of a kind the gateway writes`);
      return [kv.key, value];
    }),
  );

function spansOf(message: RequestObject<number[]>): ReceivedSpan[] {
  return (message.resourceSpans ?? []).flatMap((rs) => {
    const serviceName = String(attributesOf(rs.resource?.attributes)['service.name']);
    return (rs.scopeSpans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map((s): ReceivedSpan => ({
        traceId: hex(s.traceId),
        spanId: hex(s.spanId),
        parentSpanId: hex(s.parentSpanId ?? []),
        traceState: s.traceState ?? '',
        name: s.name,
        kind: s.kind ?? 0,
        startTimeUnixNano: BigInt(String(s.startTimeUnixNano)),
        endTimeUnixNano: BigInt(String(s.endTimeUnixNano)),
        attributes: attributesOf(s.attributes),
        links: (s.links ?? []).map((l) => ({ traceId: hex(l.traceId), spanId: hex(l.spanId) })),
        status: { code: s.status?.code ?? 0, message: s.status?.message ?? '' },
        serviceName,
      })),
    );
  });
}

// Long fields as strings (nanoseconds since the epoch do not fit a double), bytes as arrays.
const OBJECT_OPTIONS: protobuf.IConversionOptions = { longs: String, enums: Number, bytes: Array };

function decode(type: protobuf.Type, contentType: string, body: Buffer): ReceivedSpan[] {
  if (contentType === 'application/x-protobuf') {
    return spansOf(type.toObject(type.decode(body), OBJECT_OPTIONS) as RequestObject<number[]>);
  }
  if (contentType === 'application/json') {
    const json = idsToBase64(JSON.parse(body.toString('utf8')) as RequestObject<string>);
    assertConforms(type, json, 'body');
    const message = type.fromObject(json);
    const problem = type.verify(message);
    if (problem) throw new Error(problem);
    return spansOf(type.toObject(message, OBJECT_OPTIONS) as RequestObject<number[]>);
  }
  throw new Error(`unexpected content type ${contentType}`);
}

const bodyOf = async (req: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

/** Answers 200 to a conforming export request on /v1/traces, 400 to anything else, or as `options.answer` says. */
export async function startOtlpReceiver(options: OtlpReceiverOptions = {}): Promise<OtlpReceiver> {
  const type = await loadRoot();
  const requests: ExportRequest[] = [];
  const arrivals: OtlpReceiver['arrivals'] = [];
  const server: Server = createServer(async (req, res) => {
    const scripted = options.answer?.(arrivals.length);
    arrivals.push({ at: Date.now(), headers: req.headers });
    const body = await bodyOf(req);
    const contentType = String(req.headers['content-type']);
    if (scripted !== undefined) return void res.writeHead(scripted.status, scripted.headers ?? {}).end();
    try {
      if (req.method !== 'POST' || req.url !== '/v1/traces') throw new Error(`${req.method} ${req.url}`);
      requests.push({ contentType, headers: req.headers, spans: decode(type, contentType, body) });
      res.writeHead(200, { 'content-type': contentType }).end(contentType.includes('json') ? '{}' : '');
    } catch (error) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end(String(error));
    }
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const spans = () => requests.flatMap((r) => r.spans);
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    requests,
    arrivals,
    spans,
    async waitForSpans(count, timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      while (spans().length < count) {
        if (Date.now() > deadline) throw new Error(`${spans().length} of ${count} spans arrived in ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 10));
      }
      return spans();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
