// The daemon's configuration: flags, each with a HIVE_BASH_* environment equivalent, checked with zod.
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { ConfigError } from '../errors.js';
import type { Config } from './config-types.js';
import { envName, OPTIONS } from './config-options.js';

export type { Config };

/** Reads flags from `argv` over variables from `env`; throws ConfigError naming the input at fault. */
export function loadConfig(argv: string[], env: NodeJS.ProcessEnv): Config | 'help' | 'version' {
  const parsed = parseFlags(argv);
  if (parsed.help) return 'help';
  if (parsed.version) return 'version';
  const config: Record<string, unknown> = {};
  for (const option of OPTIONS) {
    const fromFlag = parsed[option.flag];
    const source = typeof fromFlag === 'string' ? `--${option.flag}` : envName(option);
    const raw = typeof fromFlag === 'string' ? fromFlag : env[envName(option)];
    if (raw === undefined || (raw === '' && source !== `--${option.flag}`)) {
      config[option.key] = option.default;
      continue;
    }
    const result = option.schema.safeParse(raw);
    if (!result.success) {
      throw new ConfigError(`${source} must be ${option.accepts}; got ${JSON.stringify(raw)}`);
    }
    config[option.key] = result.data;
  }
  config.stateDir = resolve(config.stateDir as string);
  for (const option of OPTIONS.filter((candidate) => candidate.flag.endsWith('-ceiling'))) {
    const limitFlag = option.flag.slice(0, -'-ceiling'.length);
    const [limit, ceiling] = [
      config[option.key.slice(0, -'Ceiling'.length)] as number | null,
      config[option.key] as number | null,
    ];
    if (limit !== null && ceiling !== null && limit > ceiling)
      throw new ConfigError(
        `--${limitFlag} ${limit} is above --${option.flag} ${ceiling}; the default may not exceed the ceiling`,
      );
  }
  if ((config.requestTimeoutSeconds as number) < (config.headersTimeoutSeconds as number))
    throw new ConfigError(
      `--request-timeout-seconds ${String(config.requestTimeoutSeconds)} is below --headers-timeout-seconds ${String(config.headersTimeoutSeconds)}; the whole request cannot arrive before its headers`,
    );
  if (typeof config.cgroupRoot === 'string' && config.cgroupRoot.includes(':'))
    throw new ConfigError(`--cgroup-root must be a path without ":"; got ${JSON.stringify(config.cgroupRoot)}`);
  return config as unknown as Config;
}

function parseFlags(argv: string[]): Record<string, string | boolean | undefined> {
  const options = Object.fromEntries(OPTIONS.map((option) => [option.flag, { type: 'string' as const }]));
  try {
    return parseArgs({
      args: argv,
      options: { ...options, help: { type: 'boolean', short: 'h' }, version: { type: 'boolean' } },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    const flag = /'(-[^']*)'/.exec(message)?.[1];
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && flag)
      throw new ConfigError(`unknown flag ${flag}; see --help for the flags it accepts`);
    throw new ConfigError(`${message.split('\n')[0]} (see --help)`);
  }
}

/** The text of --help, listing every flag with its variable and default. */
export function helpText(): string {
  const lines = OPTIONS.map((option) => {
    const { default: value } = option;
    const shown = value === null ? 'none' : typeof value === 'object' ? JSON.stringify(value) : String(value);
    return `  --${option.flag.padEnd(22)} ${option.help} (${envName(option)}; default ${shown})`;
  });
  return [
    'Usage: hive-bash-daemon [options]',
    '',
    'Runs shell commands as background tasks for an AI agent, served over MCP (streamable HTTP) at /mcp.',
    '',
    ...lines,
    '  -h, --help                 this text',
    '  --version                  the version',
  ].join('\n');
}
