// Reads what nix/ says without nixpkgs: the daemon's command line out of nix/agent-modules/mcp.nix, by
// evaluating the module with nix-instantiate (test/nix/fixtures/eval-module.nix) where nix is installed
// or from the module's text; and what nix/package.nix hands to nixpkgs (test/nix/fixtures/eval-package.nix).
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const REPO_ROOT = new URL('../../../', import.meta.url).pathname;
export const MCP_MODULE = join(REPO_ROOT, 'nix/agent-modules/mcp.nix');
const FIXTURES = join(REPO_ROOT, 'test/nix/fixtures');

/** Set HIVE_TEST_NIXPKGS_LIB to a nixpkgs lib directory to evaluate with it instead of the stub lib. */
const NIXPKGS_LIB = process.env.HIVE_TEST_NIXPKGS_LIB;

export interface EvaluatedModule {
  serviceConfig: Record<string, unknown> & { ExecStart: string };
  path: string[];
  mcpServer: { type: string; url: string; allowedTools: string[] };
  /** What the module gives services.prometheus (rule files as paths). */
  prometheus: {
    ruleFiles?: string[];
    scrapeConfigs?: Array<{ job_name: string; static_configs: Array<{ targets: string[] }> }>;
  };
  unit: string;
  /** The Node the default bashPackage is called with (null when bashPackage is set). */
  packageNodejs: string | null;
}

/** Whether nix-instantiate runs here. */
export function hasNixInstantiate(): boolean {
  return spawnSync('nix-instantiate', ['--version'], { stdio: 'ignore' }).status === 0;
}

export interface EvaluatedPackage {
  pname: string;
  version: string;
  nodejs: string;
  env: Record<string, string>;
  npmRebuildFlags: string[];
  preBuild: string;
  postInstall: string;
  npmRoot: string;
  packageLock: { packages: Record<string, { resolved?: string; integrity?: string }> };
  mainProgram: string;
}

/** The value of a fixture, with string arguments; with the stub lib unless HIVE_TEST_NIXPKGS_LIB is set. */
function evaluateFixture(file: string, strings: Record<string, string>): unknown {
  const args = [
    '--eval',
    '--strict',
    '--json',
    join(FIXTURES, file),
    '--arg',
    'lib',
    `import ${NIXPKGS_LIB ?? join(FIXTURES, 'stub-lib.nix')}`,
  ];
  for (const [name, value] of Object.entries(strings)) args.push('--argstr', name, value);
  return JSON.parse(execFileSync('nix-instantiate', args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }));
}

/**
 * The module's unit and registration for these services.hyperhive.agent.mcp values (and extraMcpServers
 * definitions); `nodejs` names the fixture's pkgs attribute bashNodejs is set to ('' leaves its default).
 */
export function evaluateModule(
  settings: Record<string, unknown>,
  servers: Record<string, unknown> = {},
  nodejs = '',
): EvaluatedModule {
  return evaluateFixture('eval-module.nix', {
    settings: JSON.stringify(settings),
    servers: JSON.stringify(servers),
    nodejs,
  }) as EvaluatedModule;
}

/** What nix/package.nix passes to buildNpmPackage and importNpmLock, called with `nodejs` = pkgs.NODEJS ('' passes none). */
export function evaluatePackage(nodejs = ''): EvaluatedPackage {
  return evaluateFixture('eval-package.nix', { nodejs }) as EvaluatedPackage;
}

/** The words of an ExecStart line, unquoting '…' (with '\'' inside) and backslash escapes. */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const char = line[i]!;
    if (char === "'") {
      const end = line.indexOf("'", i + 1);
      if (end === -1) throw new Error(`unterminated quote in ${JSON.stringify(line)}`);
      word = (word ?? '') + line.slice(i + 1, end);
      i = end;
    } else if (char === '\\' && i + 1 < line.length) {
      word = (word ?? '') + line[++i];
    } else if (/\s/.test(char)) {
      if (word !== null) words.push(word);
      word = null;
    } else {
      word = (word ?? '') + char;
    }
  }
  if (word !== null) words.push(word);
  return words;
}

/** The flags named in the module's daemonArgs list, in order, read from its text. */
export function moduleFlagsFromText(): string[] {
  const text = readFileSync(MCP_MODULE, 'utf8');
  const start = text.indexOf('daemonArgs =');
  if (start === -1) throw new Error(`${MCP_MODULE} has no daemonArgs list; update this parser with the module`);
  const list = text.slice(start, text.indexOf(';', start));
  return [...list.matchAll(/"(--[a-z][a-z0-9-]*)"/g)].map((match) => match[1]!);
}

/** The flags (words starting with --) of a command line. */
export function flagsOf(args: string[]): string[] {
  return args.filter((arg) => arg.startsWith('--'));
}
