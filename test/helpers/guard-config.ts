// The cost guard's settings for unit tests: the parsed defaults with a test's overrides.
import { parseConfig, type GuardConfig } from '../../src/config/config.js';

export function guardConfig(overrides: Partial<GuardConfig> = {}): GuardConfig {
  return { ...parseConfig({}).guard, ...overrides };
}
