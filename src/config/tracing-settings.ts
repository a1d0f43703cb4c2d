// OpenTelemetry tracing, read under the OpenTelemetry SDK's own variable names (its "Environment Variable
// Specification"); docs/configuration.md, "Tracing". Off unless an endpoint is set.
import * as z from 'zod/mini';
import {
  commaList,
  httpUrl,
  int,
  oneOf,
  setting,
  text,
  textOr,
  type ConfigProblem,
  type SettingValues,
} from './settings-table.js';

/** OTEL_TRACES_SAMPLER's names. */
const SAMPLER_NAMES = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;

/** `key=value,key2=value2`, values percent-encoded (OTEL_EXPORTER_OTLP_HEADERS); may hold a secret: never echoed. */
const otlpHeaders = z.pipe(
  z.optional(z.string()),
  z.transform((v, ctx) => {
    const headers: Record<string, string> = {};
    for (const entry of commaList(v)) {
      const eq = entry.indexOf('=');
      const name = entry.slice(0, eq).trim().toLowerCase();
      let value: string | undefined;
      try {
        value = decodeURIComponent(entry.slice(eq + 1).trim());
      } catch {
        value = undefined;
      }
      if (eq < 1 || !/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(name) || value === undefined || /[\0\r\n]/.test(value)) {
        ctx.issues.push({
          code: 'custom',
          message: 'each entry must be name=value (value percent-encoded)',
          input: '',
        });
        return z.NEVER;
      }
      headers[name] = value;
    }
    return headers;
  }),
);

const samplerRatio = z.optional(
  z.pipe(text(z.regex(/^(0(\.\d+)?|1(\.0+)?|\.\d+)$/, 'must be a number from 0 to 1')), z.transform(Number)),
);

export const TRACING_SETTINGS = {
  disabled: setting(
    'OTEL_SDK_DISABLED',
    z.pipe(
      z.optional(text(z.toLowerCase())),
      z.transform((v) => v === 'true'),
    ),
  ),
  endpoint: setting('OTEL_EXPORTER_OTLP_ENDPOINT', z.optional(httpUrl)),
  /** Used as given; the endpoint above gets `/v1/traces` appended. */
  tracesEndpoint: setting(
    'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    z.optional(text(z.refine((v) => /^https?:\/\//i.test(v) && URL.canParse(v), 'must be an http(s) URL'))),
  ),
  /** OTLP/HTTP only: no gRPC. */
  protocol: setting('OTEL_EXPORTER_OTLP_PROTOCOL', oneOf(['http/protobuf', 'http/json'], 'http/protobuf')),
  headers: setting('OTEL_EXPORTER_OTLP_HEADERS', otlpHeaders),
  timeoutMs: setting('OTEL_EXPORTER_OTLP_TIMEOUT', int(1, 60_000, 10_000)),
  serviceName: setting('OTEL_SERVICE_NAME', textOr('callerid-gateway')),
  sampler: setting('OTEL_TRACES_SAMPLER', oneOf(SAMPLER_NAMES, 'parentbased_always_on')),
  samplerArg: setting('OTEL_TRACES_SAMPLER_ARG', samplerRatio),
  scheduleDelayMs: setting('OTEL_BSP_SCHEDULE_DELAY', int(0, 60_000, 5_000)),
  maxQueueSize: setting('OTEL_BSP_MAX_QUEUE_SIZE', int(1, 100_000, 2_048)),
  maxExportBatchSize: setting('OTEL_BSP_MAX_EXPORT_BATCH_SIZE', int(1, 100_000, 512)),
  /** The gateway's own: traces a second (per process) a caller's context may start recording beyond the ratio. */
  callerSampledPerSecond: setting('TRACING_CALLER_SAMPLED_PER_SECOND', int(0, 1_000_000, 100)),
};

/**
 * Where and how spans are exported, or null with tracing off (OTEL_SDK_DISABLED=true, or no endpoint). The ratio is
 * OTEL_TRACES_SAMPLER_ARG for the `traceidratio` samplers (1 when unset) and ignored by the others.
 */
export function tracingConfigOf(t: SettingValues<typeof TRACING_SETTINGS>, problems: ConfigProblem[]) {
  if (t.maxExportBatchSize > t.maxQueueSize) {
    problems.push({
      variable: 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE',
      problem: `must be at most OTEL_BSP_MAX_QUEUE_SIZE (${t.maxQueueSize})`,
    });
  }
  const url = t.tracesEndpoint ?? (t.endpoint === undefined ? undefined : `${t.endpoint}/v1/traces`);
  if (t.disabled || url === undefined) return null;
  return {
    url,
    protocol: t.protocol,
    headers: t.headers,
    timeoutMs: t.timeoutMs,
    serviceName: t.serviceName,
    sampler: {
      name: t.sampler,
      ratio: t.sampler.endsWith('traceidratio') ? (t.samplerArg ?? 1) : 1,
      callerPerSecond: t.callerSampledPerSecond,
    },
    batch: {
      scheduleDelayMs: t.scheduleDelayMs,
      maxQueueSize: t.maxQueueSize,
      maxExportBatchSize: t.maxExportBatchSize,
    },
  };
}
