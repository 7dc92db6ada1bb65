// The daemon's configuration: flags, each with a HIVE_BASH_* environment equivalent, read by the
// option table (config-options.ts) as one zod object, whose output is the Config type.
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../../errors.js';
import { envName, OPTION_INFO } from './config-option.js';
import { OPTIONS } from './config-options.js';

const CONFIG_SCHEMA = z.object(OPTIONS);
export type Config = z.output<typeof CONFIG_SCHEMA>;

/** Every option's Config field and info, in the table's order (option() registered each). */
const FIELDS = Object.entries(OPTIONS).map(([key, field]) => [key, OPTION_INFO.get(field)!] as const);

/** Reads flags from `argv` over variables from `env`; throws ConfigError naming the input at fault. */
export function loadConfig(argv: string[], env: NodeJS.ProcessEnv): Config | 'help' | 'version' {
  const parsed = parseFlags(argv);
  if (parsed.help) return 'help';
  if (parsed.version) return 'version';
  // Each field's text and where it came from: its flag, else its variable (empty counts as unset).
  const given = new Map<string, { source: string; raw: string }>();
  for (const [key, info] of FIELDS) {
    const [fromFlag, fromEnv] = [parsed[info.flag], env[envName(info)]];
    if (typeof fromFlag === 'string') given.set(key, { source: `--${info.flag}`, raw: fromFlag });
    else if (fromEnv !== undefined && fromEnv !== '') given.set(key, { source: envName(info), raw: fromEnv });
  }
  const result = CONFIG_SCHEMA.safeParse(Object.fromEntries([...given].map(([key, { raw }]) => [key, raw])));
  if (!result.success) {
    // The first field at fault, in the table's order.
    const key = String(result.error.issues[0]!.path[0]);
    const { source, raw } = given.get(key)!;
    const { accepts } = FIELDS.find(([each]) => each === key)![1];
    throw new ConfigError(`${source} must be ${accepts}; got ${JSON.stringify(raw)}`);
  }
  const config = { ...result.data, stateDir: resolve(result.data.stateDir) };
  checkTogether(config);
  return config;
}

/** The rules between fields: a limit at most its ceiling, the headers' time at most the request's. */
function checkTogether(config: Config): void {
  const values: Record<string, unknown> = config;
  for (const [key, info] of FIELDS.filter(([, each]) => each.flag.endsWith('-ceiling'))) {
    const limitFlag = info.flag.slice(0, -'-ceiling'.length);
    const [limit, ceiling] = [values[key.slice(0, -'Ceiling'.length)], values[key]];
    if (typeof limit === 'number' && typeof ceiling === 'number' && limit > ceiling)
      throw new ConfigError(
        `--${limitFlag} ${limit} is above --${info.flag} ${ceiling}; the default may not exceed the ceiling`,
      );
  }
  if (config.requestTimeoutSeconds < config.headersTimeoutSeconds)
    throw new ConfigError(
      `--request-timeout-seconds ${config.requestTimeoutSeconds} is below --headers-timeout-seconds ${config.headersTimeoutSeconds}; the whole request cannot arrive before its headers`,
    );
  if (config.cgroupRoot?.includes(':'))
    throw new ConfigError(`--cgroup-root must be a path without ":"; got ${JSON.stringify(config.cgroupRoot)}`);
}

function parseFlags(argv: string[]): Record<string, string | boolean | undefined> {
  const options = Object.fromEntries(FIELDS.map(([, info]) => [info.flag, { type: 'string' as const }]));
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
  const lines = FIELDS.map(([, info]) => {
    const { default: value } = info;
    const shown =
      typeof value === 'string' || typeof value === 'number'
        ? String(value)
        : value === null
          ? 'none'
          : JSON.stringify(value);
    return `  --${info.flag.padEnd(22)} ${info.help} (${envName(info)}; default ${shown})`;
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
