/** Loads configuration: default.yaml, then the GATEWAY_CONFIG file, then environment variables. */
import { readFileSync } from 'node:fs';
import { parseYaml } from './parse-yaml.js';
import type { z } from 'zod';
import { ConfigError } from '../errors.js';
import { packageFile } from '../package-file.js';
import { configSchema, type Config } from './schema.js';

const DEFAULT_FILE = packageFile('config/default.yaml');

type Plain = Record<string, unknown>;

function isPlain(value: unknown): value is Plain {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Deep-merges `over` into `base`: objects merge key by key, everything else (arrays too) replaces. */
export function mergeConfig(base: Plain, over: Plain): Plain {
  const out: Plain = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = out[key];
    out[key] = isPlain(current) && isPlain(value) ? mergeConfig(current, value) : value;
  }
  return out;
}

function readYaml(path: string | URL, label: string): Plain {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError([
      `${label}: cannot read ${String(path)} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    ]);
  }
  let parsed: unknown;
  try {
    parsed = parseYaml(text);
  } catch (error) {
    throw new ConfigError([
      `${label}: not valid YAML (${(error as Error).message.split('\n')[0] ?? ''})`,
    ]);
  }
  if (parsed === null || parsed === undefined) return {};
  if (!isPlain(parsed)) throw new ConfigError([`${label}: must be a YAML mapping`]);
  return parsed;
}

function numberOrRaw(raw: string): number | string {
  return /^\d+$/.test(raw) ? Number(raw) : raw;
}

/** The environment overrides of DESIGN A1, as a partial config, and which variable set each key path. */
function fromEnv(env: NodeJS.ProcessEnv): { over: Plain; sources: Map<string, string> } {
  const over: Plain = {};
  const sources = new Map<string, string>();
  const set = (path: string[], value: unknown): void => {
    let node = over;
    for (const key of path.slice(0, -1)) node = (node[key] ??= {}) as Plain;
    node[path[path.length - 1]!] = value;
  };
  const mapping: Array<[string, string[], (raw: string) => unknown]> = [
    ['PORT', ['server', 'port'], numberOrRaw],
    ['HOST', ['server', 'host'], String],
    ['HOST_SUFFIX', ['server', 'hostSuffix'], String],
    ['ADMIN_PORT', ['admin', 'port'], numberOrRaw],
    ['ADMIN_HOST', ['admin', 'host'], String],
    ['ADMIN_TOKEN', ['admin', 'token'], String],
    ['UPSTREAM_URL', ['upstream', 'baseUrl'], String],
    ['REDIS_URL', ['cache', 'redis', 'url'], String],
    ['LOG_LEVEL', ['log', 'level'], String],
    ['WORKERS', ['server', 'workers'], numberOrRaw],
    ['INSTANCE_ID', ['server', 'instanceId'], String],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', ['tracing', 'endpoint'], String],
    ['OTEL_SERVICE_NAME', ['tracing', 'serviceName'], String],
  ];
  for (const [name, path, convert] of mapping) {
    const raw = env[name];
    if (raw !== undefined && raw !== '') {
      set(path, convert(raw));
      sources.set(path.join('.'), name);
    }
  }
  return { over, sources };
}

/** One line per problem: zod reports unknown keys on their parent, so each is named by its own path. */
function describe(issue: z.core.$ZodIssue, sources: ReadonlyMap<string, string>): string[] {
  const path = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => `${path === '' ? key : `${path}.${key}`}: unknown key`);
  }
  const source = sources.get(path);
  return [
    `${path === '' ? '(root)' : path}: ${issue.message}${source === undefined ? '' : ` (from env ${source})`}`,
  ];
}

/**
 * Checks between the config and the environment. They live here, not in the schema, so they see
 * the environment the caller passed (the one the app will read), not necessarily process.env.
 */
function envProblems(config: Config, env: NodeJS.ProcessEnv): string[] {
  const problems: string[] = [];
  if (
    config.upstream.auth === 'service-key' &&
    config.upstream.serviceKeyFile === null &&
    !env['UPSTREAM_SERVICE_KEY']
  ) {
    problems.push(
      'upstream.serviceKeyFile: required with upstream.auth service-key (or set UPSTREAM_SERVICE_KEY)',
    );
  }
  return problems;
}

/**
 * Validates a merged raw config; throws one ConfigError naming every bad key path. `sources` maps
 * key paths set from the environment to their variable, so a bad PORT is reported as such; `env`
 * is the environment the app will run with (buildApp's deps.env), for checks that depend on it.
 */
export function validateConfig(
  raw: unknown,
  sources: ReadonlyMap<string, string> = new Map(),
  env: NodeJS.ProcessEnv = process.env,
): Config {
  const result = configSchema.safeParse(raw);
  if (!result.success)
    throw new ConfigError(result.error.issues.flatMap((issue) => describe(issue, sources)));
  const problems = envProblems(result.data, env);
  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze(result.data);
}

/** The defaults file as a plain object (tests merge their overrides over it). */
export function defaultRawConfig(): Plain {
  return readYaml(DEFAULT_FILE, 'config/default.yaml');
}

/** Loads and validates the whole configuration from files and the environment. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  let raw = defaultRawConfig();
  const file = env['GATEWAY_CONFIG'];
  if (file) raw = mergeConfig(raw, readYaml(file, 'GATEWAY_CONFIG'));
  const { over, sources } = fromEnv(env);
  return validateConfig(mergeConfig(raw, over), sources, env);
}

/** Builds a validated config from the defaults plus overrides (tests, demo, bench). */
export function configWith(overrides: Plain): Config {
  return validateConfig(mergeConfig(defaultRawConfig(), overrides));
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
