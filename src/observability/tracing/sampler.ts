// Which new traces are recorded: the OpenTelemetry SDK's samplers by their OTEL_TRACES_SAMPLER names. Spans under
// a span of the gateway's own take its decision; only a trace's first span in the gateway asks the sampler.
import type { TracingConfig } from '../../config/config.js';

/**
 * A sampler by its OTEL_TRACES_SAMPLER name, the share of traces the `traceidratio` ones record (0 to 1), and how many
 * traces a second a caller's context may start recording beyond that (TRACING_CALLER_SAMPLED_PER_SECOND).
 */
export type SamplerConfig = TracingConfig['sampler'];
type Sampler = Pick<SamplerConfig, 'name' | 'ratio'>;

// The rightmost 56 bits of a W3C trace id are random (Trace Context Level 2, section 3.2.2.3); OpenTelemetry's
// probability sampling compares them with a threshold, so every process decides the same for one trace id.
const RANDOM_HEX_DIGITS = 14;
const RANDOM_RANGE = 2 ** 56;

/** Whether a trace id is recorded, by its random part alone. */
type TraceIdTest = (traceId: string) => boolean;

/**
 * Whether a trace id falls in the recorded share `ratio`: its random part at or above (1 - ratio) of the range. The
 * threshold is written once as 14 hex digits, which sort as their numbers do: a trace id is compared, not parsed.
 */
function ratioTest(ratio: number): TraceIdTest {
  const threshold = Math.ceil((1 - ratio) * RANDOM_RANGE);
  if (ratio >= 1 || threshold <= 0) return () => true;
  if (ratio <= 0 || threshold >= RANDOM_RANGE) return () => false;
  const digits = threshold.toString(16).padStart(RANDOM_HEX_DIGITS, '0');
  return (traceId) => traceId.slice(-RANDOM_HEX_DIGITS) >= digits;
}

/** Whether `traceId` (lowercase hex, as a valid one is) falls in the recorded share `ratio`. */
export const traceIdInRatio = (traceId: string, ratio: number): boolean => ratioTest(ratio)(traceId);

/**
 * Whether a trace's first span in the gateway is recorded, given its trace id and the caller's decision when its
 * `traceparent` was valid (undefined for a new trace); only the `parentbased_` samplers follow the caller.
 */
export type SampleDecision = (traceId: string, parentSampled: boolean | undefined) => boolean;

/** The decision of the sampler `sampler` names, made ready once (its threshold written) for every span after. */
export function samplerOf(sampler: Sampler): SampleDecision {
  const parentBased = sampler.name.startsWith('parentbased_');
  const own = ownDecision(sampler);
  return parentBased ? (traceId, parentSampled) => parentSampled ?? own(traceId) : own;
}

function ownDecision(sampler: Sampler): TraceIdTest {
  switch (sampler.name) {
    case 'always_on':
    case 'parentbased_always_on':
      return () => true;
    case 'always_off':
    case 'parentbased_always_off':
      return () => false;
    case 'traceidratio':
    case 'parentbased_traceidratio':
      return ratioTest(sampler.ratio);
  }
}

/** Whether the sampler records every new trace whatever its id: then a caller's context adds nothing to record. */
export function recordsEveryTrace(sampler: Sampler): boolean {
  if (sampler.name.endsWith('always_on')) return true;
  return sampler.name.endsWith('traceidratio') && sampler.ratio >= 1;
}

/** The traces callers' contexts may still start recording: a token bucket, refilled by the spans' clock. */
export interface CallerSampleBudget {
  /** Takes one trace at `now` (ms); false, and counted, when none is left. */
  take(now: number): boolean;
  /** Traces refused so far. */
  readonly capped: number;
}

/** `perSecond` traces a second, up to one second's worth at once; full at first. */
export function callerSampleBudget(perSecond: number): CallerSampleBudget {
  const state = { tokens: perSecond, at: undefined as number | undefined, capped: 0 };
  return {
    take(now) {
      if (state.at !== undefined)
        state.tokens = Math.min(perSecond, state.tokens + (Math.max(0, now - state.at) / 1000) * perSecond);
      state.at = now;
      if (state.tokens >= 1) {
        state.tokens -= 1;
        return true;
      }
      state.capped++;
      return false;
    },
    get capped() {
      return state.capped;
    },
  };
}
