// Drives the real Claude Code (the npm package @anthropic-ai/claude-code) against a real daemon, a
// fake model on loopback scripting the model's calls (fake-model.ts). Too slow for npm test (a
// 400 MB download, a 20 s task): run it by hand, `node dist/test/clients/claude-code.js`
// (docs/development.md). It shows two things, each printed as it is seen:
//
// 1. channel: interactive Claude Code in tmux, launched with --dangerously-load-development-channels
//    server:bash, its HOME's ~/.claude.json turning Anthropic's flag for channels on
//    (cachedGrowthBookFeatures.tengu_harbor), against a daemon with --decline-discover claude-code:
//    the model runs `sleep 20; echo done` with wait_seconds 0, ends its turn, and the task's end
//    reaches it as a <channel> event, with no status call in between. DISABLE_TELEMETRY=1 would turn
//    the flags off ("Channel notifications skipped: channels feature is not currently available" in
//    its --debug log), so it is not set; the fake model's key goes in ANTHROPIC_AUTH_TOKEN.
// 2. ask: headless `claude -p` (2026-07-28, elicitation declared) under the policy
//    {"match": ["/usr/bin/id"], "decision": "ask"}: the model runs `id`; the script checks that the
//    exec waits in `hive-bash approvals` (an elicitation answered `cancel` must not refuse it), prints
//    what the model was told, and denies what waits.
//
// HIVE_CC_PARTS=channel or =ask runs one part; HIVE_CC_ASK_WAIT_SECONDS gives part 2's run a
// wait_seconds (0 leaves the ask to the operator at once, which checks the check).
// CLAUDE_BIN names a claude executable to use; otherwise the package (CLAUDE_CODE_VERSION, default
// 2.1.332) is installed into a temporary prefix. Everything it starts is stopped and every temporary
// folder removed at the end. Exit code 0 when both held, 1 otherwise.
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { launchDaemon } from '../helpers/daemon.js';
import { seenText, startFakeModel, type FakeModel, type Turn } from './fake-model.js';

const VERSION = process.env.CLAUDE_CODE_VERSION ?? '2.1.332';
const CLI_JS = new URL('../../src/cli/main.js', import.meta.url).pathname;
const API_KEY = 'sk-ant-api03-fake-key-for-a-loopback-model-0123456789abcdef';
const SLEEP = 'sleep 20; echo done';
/** How a channel event of the server named bash opens, as the model sees it. */
const CHANNEL_TAG = '<channel source="bash"';
const TMUX = `hive-cc-${process.pid}`;
/** HIVE_CC_ASK_WAIT_SECONDS: the wait_seconds of part 2's run (unset: run's default, as in issue 52). */
const ASK_WAIT =
  process.env.HIVE_CC_ASK_WAIT_SECONDS === undefined
    ? {}
    : { wait_seconds: Number(process.env.HIVE_CC_ASK_WAIT_SECONDS) };
/** HIVE_CC_PARTS: `channel`, `ask`, or both (unset). */
const PARTS = process.env.HIVE_CC_PARTS ?? 'channel,ask';
const run = promisify(execFile);
const cleanups: Array<() => Promise<void> | void> = [];
const log = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);

/** The claude executable: CLAUDE_BIN, or the package installed into a temporary prefix. */
async function claudeBinary(): Promise<string> {
  if (process.env.CLAUDE_BIN) return process.env.CLAUDE_BIN;
  const prefix = mkdtempSync(join(tmpdir(), 'hive-cc-npm-'));
  cleanups.push(() => rmSync(prefix, { recursive: true, force: true }));
  log(`npm install --prefix ${prefix} @anthropic-ai/claude-code@${VERSION}`);
  await run('npm', ['install', '--prefix', prefix, '--no-audit', '--no-fund', `@anthropic-ai/claude-code@${VERSION}`]);
  const scope = join(prefix, 'node_modules', '@anthropic-ai');
  // The platform package holds the native executable (the wrapper's postinstall may not have run).
  const platform = readdirSync(scope).find(
    (name) => name.startsWith('claude-code-') && existsSync(join(scope, name, 'claude')),
  );
  if (platform === undefined) throw new Error(`no claude executable under ${scope}`);
  return join(scope, platform, 'claude');
}

/** A HOME for Claude Code: onboarding done, the folder trusted, the key approved, channels' flag on. */
function claudeHome(work: string): string {
  const home = join(work, 'home');
  mkdirSync(join(home, '.claude'), { recursive: true });
  const config = {
    hasCompletedOnboarding: true,
    theme: 'dark',
    numStartups: 3,
    customApiKeyResponses: { approved: [API_KEY.slice(-20)], rejected: [] },
    projects: { [work]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } },
    cachedGrowthBookFeatures: { tengu_harbor: true },
    cachedGrowthBookFeaturesAt: Date.now(),
    cachedFeatureFlags: { tengu_harbor: true },
    cachedFeatureFlagsAt: Date.now(),
  };
  writeFileSync(join(home, '.claude.json'), JSON.stringify(config, null, 2));
  return home;
}

function claudeEnv(home: string, model: FakeModel): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    TERM: 'xterm-256color',
    ANTHROPIC_AUTH_TOKEN: API_KEY,
    ANTHROPIC_BASE_URL: model.url,
    ENABLE_TOOL_SEARCH: 'false',
    DISABLE_AUTOUPDATER: '1',
  };
}

const mcpConfig = (url: string) => JSON.stringify({ mcpServers: { bash: { type: 'http', url } } });

/** The last message of the agent's request: a tool's result, a channel event, or the person's prompt. */
function lastUserText(request: any): string {
  return seenText({ messages: [request.messages.at(-1)] });
}

/** A daemon on a free port with `args`, its state in `work`. */
async function startDaemon(work: string, args: string[]): Promise<{ url: string; child: ChildProcess }> {
  const state = mkdtempSync(join(work, 'state-'));
  const { child, url } = await launchDaemon(
    ['--port', '0', '--state-dir', state, '--log-level', 'warn', ...args],
    {},
    () => {},
  );
  cleanups.push(() => {
    if (child.exitCode === null) child.kill('SIGTERM');
  });
  return { url, child };
}

/** The names of the tools the model called in the conversation so far. */
function toolCalls(request: any): string[] {
  return request.messages.flatMap((message: any) =>
    message.role === 'assistant' && Array.isArray(message.content)
      ? message.content.filter((part: any) => part.type === 'tool_use').map((part: any) => part.name as string)
      : [],
  );
}

async function health(url: string): Promise<{ sessions: number }> {
  const answer = await fetch(new URL('/healthz', url));
  return (await answer.json()) as { sessions: number };
}

/** Resolves once `check` holds, looking every 200 ms; throws after `timeoutMs`. */
async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`no ${what} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function tmux(...args: string[]): string {
  const result = spawnSync('tmux', args, { encoding: 'utf8' });
  return result.stdout ?? '';
}

const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;

/** Answers the screens Claude Code may ask about at the start (the development channels' warning). */
function confirmPrompts(): void {
  const screen = tmux('capture-pane', '-p', '-t', TMUX);
  if (
    /development channels|Enter to confirm|I am using this for local development/i.test(screen) &&
    !/❯\s*$/.test(screen)
  )
    tmux('send-keys', '-t', TMUX, 'Enter');
}

/** Starts `argv` with `env` in `work` in a tmux session of its own (removed at the end). */
function startInTmux(argv: string[], env: Record<string, string>, work: string): void {
  const script = join(work, 'claude.sh');
  const exports = Object.entries(env).map(([name, value]) => `export ${name}=${quote(value)}`);
  const lines = ['#!/bin/sh', `cd ${quote(work)}`, ...exports, `exec ${argv.map(quote).join(' ')}`, ''];
  writeFileSync(script, lines.join('\n'));
  tmux('new-session', '-d', '-s', TMUX, '-x', '180', '-y', '50', `sh ${script}`);
  cleanups.push(() => void tmux('kill-session', '-t', TMUX));
}

/**
 * Types the prompt once Claude Code holds its session (and so its GET stream): a prompt given
 * before would reach the model before the server's tools do. The Enter goes apart from the text,
 * which Claude Code takes as a paste (an Enter in it is a new line).
 */
async function typePrompt(daemonUrl: string, model: FakeModel, prompt: string): Promise<void> {
  await until(async () => (await health(daemonUrl)).sessions >= 1, 60_000, 'a session of Claude Code');
  tmux('send-keys', '-t', TMUX, '-l', prompt);
  const typed = prompt.slice(-30);
  await until(() => tmux('capture-pane', '-p', '-t', TMUX).includes(typed), 10_000, 'the prompt typed');
  await until(() => (tmux('send-keys', '-t', TMUX, 'Enter'), model.requests.length > 0), 10_000, 'the prompt sent');
}

/** Part 1: interactive Claude Code in tmux hears a task's end as a <channel> event. */
async function channelPart(claude: string, work: string): Promise<boolean> {
  const daemon = await startDaemon(work, ['--decline-discover', 'claude-code']);
  const model = await startFakeModel((_seen, request): Turn => {
    if (lastUserText(request).includes(CHANNEL_TAG)) return { text: 'The channel told me the task ended.' };
    if (toolCalls(request).length === 0) return { tool: 'mcp__bash__run', input: { command: SLEEP, wait_seconds: 0 } };
    return { text: 'It runs in the background; its end will come to me.' };
  });
  cleanups.push(() => model.close());
  if (process.env.HIVE_CC_DUMP)
    cleanups.push(() => writeFileSync(process.env.HIVE_CC_DUMP!, JSON.stringify(model.all, null, 1)));
  const channels = ['--dangerously-load-development-channels', 'server:bash'];
  const argv = [claude, ...channels, '--mcp-config', mcpConfig(daemon.url), '--allowedTools', 'mcp__bash', '--debug'];
  log(`tmux: claude ${channels.join(' ')} ... against ${daemon.url} (--decline-discover claude-code)`);
  startInTmux(argv, claudeEnv(claudeHome(work), model), work);
  const prompts = setInterval(confirmPrompts, 500);
  try {
    await typePrompt(daemon.url, model, `Run \`${SLEEP}\` in the background with the bash server's run tool.`);
    await model.next((seen) => seen.includes('"state":"running"'), 90_000, "run's answer");
    log(`the model got run's answer: ${oneLine(lastUserText(model.requests.at(-1)))}`);
    const before = model.requests.length;
    const heard = await model.next((seen) => seen.includes(CHANNEL_TAG), 90_000, 'a <channel> event');
    const event = heard.slice(heard.lastIndexOf(CHANNEL_TAG));
    log(`the model heard (${model.requests.length - before} request(s) after run's answer):\n${event}`);
    const calls = [...new Set(model.requests.flatMap(toolCalls))];
    log(`tool calls the model made: ${calls.join(', ')}`);
    log(`screen:\n${tmux('capture-pane', '-p', '-t', TMUX).trimEnd()}`);
    return event.includes('event="task_ended"') && event.includes('done') && !calls.includes('mcp__bash__status');
  } catch (error) {
    log(`channel: ${(error as Error).message}\nscreen:\n${tmux('capture-pane', '-p', '-t', TMUX).trimEnd()}`);
    log(`Claude Code's debug log on channels and the server:\n${debugLines(join(work, 'home'))}`);
    return false;
  } finally {
    clearInterval(prompts);
  }
}

/** The lines of Claude Code's debug log (--debug) about channels and the MCP server. */
function debugLines(home: string): string {
  const folder = join(home, '.claude', 'debug');
  if (!existsSync(folder)) return '(no debug log)';
  return readdirSync(folder)
    .filter((name) => name.endsWith('.txt'))
    .flatMap((name) => readFileSync(join(folder, name), 'utf8').split('\n'))
    .filter((line) => /Channel notifications|notifications\/claude\/channel|MCP server "bash"/.test(line))
    .slice(0, 40)
    .join('\n');
}

const oneLine = (text: string) => text.replace(/\s+/g, ' ').slice(0, 400);

/** `hive-bash ARGS` against the daemon at `url`: its stdout. */
async function hiveBash(url: string, ...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [CLI_JS, '--url', url, ...args]).catch((error) => error);
  return String(stdout ?? '');
}

/** Part 2: headless `claude -p` under an ask rule; the exec must wait in `hive-bash approvals`. */
async function askPart(claude: string, work: string): Promise<boolean> {
  mkdirSync(join(work, 'policy'));
  const policy = join(work, 'policy', 'policy.json');
  const rule = { match: ['/usr/bin/id'], decision: 'ask', reason: 'a person decides' };
  writeFileSync(policy, JSON.stringify({ default: 'allow', rules: [rule] }));
  const daemon = await startDaemon(work, ['--policy', policy, '--policy-ask-timeout', '120']);
  const model = await startFakeModel((_seen, request): Turn =>
    toolCalls(request).length === 0
      ? { tool: 'mcp__bash__run', input: { command: 'id', ...ASK_WAIT } }
      : { text: 'That is what came back.' },
  );
  cleanups.push(() => model.close());
  if (process.env.HIVE_CC_DUMP)
    cleanups.push(() => writeFileSync(`${process.env.HIVE_CC_DUMP!}.ask`, JSON.stringify(model.all, null, 1)));
  const env = claudeEnv(claudeHome(work), model);
  const argv = [
    '-p',
    'Run id with the bash server.',
    '--allowedTools',
    'mcp__bash',
    '--mcp-config',
    mcpConfig(daemon.url),
  ];
  log(`claude ${argv.slice(0, 4).join(' ')} ... against ${daemon.url} with the ask rule`);
  const child = spawn(claude, argv, { env, cwd: work, stdio: ['ignore', 'pipe', 'pipe'] });
  cleanups.push(() => void child.kill('SIGKILL'));
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (output += text));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let waiting: string[] = [];
  let done = false;
  void exited.then(() => (done = true));
  const deadline = Date.now() + 120_000;
  while (!done && waiting.length === 0 && Date.now() < deadline) {
    waiting = await idWaiting(daemon.url);
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  const code = await Promise.race([exited, new Promise<null>((resolve) => setTimeout(() => resolve(null), 60_000))]);
  if (waiting.length === 0) waiting = await idWaiting(daemon.url);
  const result = model.requests.length > 1 ? lastUserText(model.requests.at(-1)) : '(no tool result reached the model)';
  log(`claude -p exited ${code}; it printed: ${oneLine(output)}`);
  log(`the model read: ${oneLine(result)}`);
  const table = (await hiveBash(daemon.url, 'approvals')).trimEnd();
  log(waiting.length === 0 ? `hive-bash approvals never listed the exec: ${table}` : `hive-bash approvals:\n${table}`);
  for (const id of waiting) await hiveBash(daemon.url, 'deny', id);
  return waiting.length > 0;
}

/** The ids of the execs of /usr/bin/id that wait for approval (hive-bash approvals --json). */
async function idWaiting(url: string): Promise<string[]> {
  try {
    const report = JSON.parse(await hiveBash(url, 'approvals', '--json')) as {
      approvals: Array<{ id: string; program: string }>;
    };
    return report.approvals.filter((exec) => exec.program === '/usr/bin/id').map((exec) => exec.id);
  } catch {
    return [];
  }
}

async function main(): Promise<number> {
  const work = mkdtempSync(join(tmpdir(), 'hive-cc-'));
  cleanups.push(() => rmSync(work, { recursive: true, force: true }));
  try {
    const claude = await claudeBinary();
    log(`claude --version: ${spawnSync(claude, ['--version'], { encoding: 'utf8' }).stdout.trim()}`);
    const channel = PARTS.includes('channel') ? await channelPart(claude, mkdtempSync(join(work, 'channel-'))) : true;
    tmux('kill-session', '-t', TMUX);
    const ask = PARTS.includes('ask') ? await askPart(claude, mkdtempSync(join(work, 'ask-'))) : true;
    log(
      `channel event reached the model: ${channel ? 'yes' : 'NO'}; -p ask reached hive-bash approvals: ${ask ? 'yes' : 'NO'}`,
    );
    return channel && ask ? 0 : 1;
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }
}

// Stopped early (Ctrl-C, kill), it still stops what it started and removes its folders.
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    void (async () => {
      for (const cleanup of cleanups.reverse()) await cleanup();
      process.exit(130);
    })();
  });
process.exitCode = await main();
