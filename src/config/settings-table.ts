// How settings are declared and read: a table whose entries each give one environment name and its parser (the
// default included), placed where its value goes in the object the table fills. Validation and that object both
// come from the table, so adding a setting is one entry.
import * as z from 'zod/mini';

export type EnvSource = Record<string, string | undefined>;

export interface ConfigProblem {
  variable: string;
  problem: string;
}

/** Every wrong setting found at once, one line each, so a newcomer fixes them in one go. */
export class ConfigError extends Error {
  /** The first wrong variable. */
  readonly variable: string;
  readonly problems: ConfigProblem[];
  constructor(variable: string, problem: string, more: ConfigProblem[] = []) {
    const problems = [{ variable, problem }, ...more];
    super(problems.map((p) => `configuration error: ${p.variable}: ${p.problem}`).join('\n'));
    this.name = 'ConfigError';
    this.variable = variable;
    this.problems = problems;
  }
}

export function configErrorOf(problems: readonly ConfigProblem[]): ConfigError {
  const [first, ...more] = problems;
  return new ConfigError(first!.variable, first!.problem, more);
}

/** One setting: its environment name and its parser, which also holds its default. */
export interface Setting<S extends z.ZodMiniType = z.ZodMiniType> {
  readonly env: string;
  readonly parser: S;
}

export const setting = <S extends z.ZodMiniType>(env: string, parser: S): Setting<S> => ({ env, parser });

/** Settings in the shape of the object they fill: an entry's place in the table is its value's place there. */
export interface SettingsTable {
  readonly [field: string]: Setting | SettingsTable;
}

/** The object a table of settings fills. */
export type SettingValues<T> =
  T extends Setting<infer S> ? z.output<S> : { -readonly [K in keyof T]: SettingValues<T[K]> };

const isSetting = (entry: Setting | SettingsTable): entry is Setting =>
  typeof entry.env === 'string' && typeof entry.parser === 'object';

function entriesOf(table: SettingsTable, path: readonly string[] = []): { path: string[]; setting: Setting }[] {
  return Object.entries(table).flatMap(([field, entry]) =>
    isSetting(entry) ? [{ path: [...path, field], setting: entry }] : entriesOf(entry, [...path, field]),
  );
}

export interface SettingsReader<T extends SettingsTable> {
  /** Every environment name the table reads, in table order. */
  readonly names: readonly string[];
  /** The filled object, or every wrong variable (one problem each). An empty value counts as unset. */
  read(source: EnvSource): { ok: true; values: SettingValues<T> } | { ok: false; problems: ConfigProblem[] };
}

export function settingsReader<T extends SettingsTable>(table: T): SettingsReader<T> {
  const entries = entriesOf(table);
  // Two entries under one name would silently read one value twice: a mistake in the table, caught at load.
  const twice = entries.map((e) => e.setting.env).find((name, i, names) => names.indexOf(name) !== i);
  if (twice !== undefined) throw new Error(`the settings table names ${twice} twice`);
  const schema = z.object(Object.fromEntries(entries.map((e) => [e.setting.env, e.setting.parser])));
  return {
    names: entries.map((e) => e.setting.env),
    read(source) {
      const input: EnvSource = {};
      for (const { setting: s } of entries) {
        const value = source[s.env];
        if (value !== undefined && value !== '') input[s.env] = value;
      }
      const result = schema.safeParse(input);
      if (!result.success) {
        const problems: ConfigProblem[] = [];
        for (const issue of result.error.issues) {
          const variable = String(issue.path[0] ?? 'environment');
          if (problems.some((p) => p.variable === variable)) continue;
          problems.push({
            variable,
            problem: issue.code === 'invalid_value' ? `must be one of ${issue.values.join(', ')}` : issue.message,
          });
        }
        return { ok: false, problems };
      }
      const values: Record<string, unknown> = {};
      for (const { path, setting: s } of entries) {
        let node = values;
        for (const step of path.slice(0, -1)) node = (node[step] ??= {}) as Record<string, unknown>;
        node[path.at(-1)!] = (result.data as Record<string, unknown>)[s.env];
      }
      return { ok: true, values: values as SettingValues<T> };
    },
  };
}

// zod/mini: the same validation as zod's classic API, but tree-shakable, so the Worker bundle carries only the
// checks used here (the classic API alone was over half of the Worker's bundle).

/** Trimmed text (`z.trim()` overwrites the value before the checks after it). */
export const text = (...checks: z.core.$ZodCheck<string>[]) => z.string().check(z.trim(), ...checks);

// One message for every way a number can be wrong: it says what is allowed.
const wholeNumber = (min: number, max: number) => {
  const allowed = `must be a whole number from ${min} to ${max}`;
  return z.pipe(
    z.pipe(text(z.regex(/^\d+$/, allowed)), z.transform(Number)),
    z.int().check(z.gte(min, allowed), z.lte(max, allowed)),
  );
};

export const int = (min: number, max: number, fallback: number) => z._default(wholeNumber(min, max), fallback);

/** Unset means "no limit". */
export const optionalInt = (min: number, max: number) => z.optional(wholeNumber(min, max));

/** One of a few words, with a default. */
export const oneOf = <const T extends readonly [string, ...string[]]>(words: T, fallback: T[number]) =>
  z._default(z.enum(words), fallback);

/** Two words for on and off (`true`/`false`, `on`/`off`), read as a boolean. */
export const flag = (on: string, off: string, fallback: boolean) =>
  z._default(
    z.pipe(
      z.enum([on, off]),
      z.transform((v) => v === on),
    ),
    fallback,
  );

/** Trimmed text, absent when empty. */
export const optionalText = z.pipe(
  z.optional(text()),
  z.transform((v) => (v ? v : undefined)),
);

/** Trimmed, non-empty text with a default. */
export const textOr = (fallback: string) => z._default(text(z.minLength(1)), fallback);

/** An http(s) URL, a trailing slash dropped. */
export const httpUrl = z.pipe(
  text(
    z.refine((v) => URL.canParse(v), 'must be an absolute URL'),
    z.refine((v) => /^https?:\/\//i.test(v), 'must be an http(s) URL'),
  ),
  z.transform((v) => v.replace(/\/+$/, '')),
);

/** A comma-separated list, blanks dropped. */
export const commaList = (v: string | undefined): string[] =>
  (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

export const idList = z.pipe(z.optional(z.string()), z.transform(commaList));

/** Empty means unset. */
export const optionalSecret = z.pipe(
  z.optional(z.string()),
  z.transform((v) => (v ? v : undefined)),
);
