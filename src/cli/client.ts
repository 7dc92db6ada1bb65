// The CLI's connection to a running daemon: MCP tool calls (in 2026-07-28 when the daemon offers
// it, else the SDK's client in a 2025 session), plain GETs beside /mcp, the bearer token, and
// every failure turned into a CliError.
import { VERSION } from '../shared/version.js';
import { readRegularFile, TOKEN_FILE } from '../shared/regular-file.js';
import { CliError, UnreachableError, UsageError } from './cli-error.js';
import type { SessionClient } from './session-client.js';
import {
  callStatelessTool,
  HttpStatusError,
  offersStateless,
  RpcAnswerError,
  type ToolCallResult,
} from './stateless-client.js';

export const DEFAULT_URL = 'http://127.0.0.1:7433/mcp';
/** Above the daemon's longest wait (30 s), so a status wait never times out on our side. */
const CALL_TIMEOUT_MS = 45_000;
const NETWORK_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);

export interface ClientOptions {
  url: string;
  tokenFile: string | null;
}

export class DaemonClient {
  readonly url: URL;
  private readonly headers: Record<string, string>;
  /** The SDK's 2025 session, imported and opened on the first call to a daemon without 2026-07-28. */
  private session: SessionClient | null = null;
  /** The era the daemon speaks, asked once (server/discover) on the first call. */
  private era: Promise<'stateless' | 'session'> | null = null;

  constructor(private readonly options: ClientOptions) {
    this.url = parseDaemonUrl(options.url);
    this.headers = options.tokenFile === null ? {} : { authorization: `Bearer ${readToken(options.tokenFile)}` };
  }

  /** The structured result of tool `name`; a refusal, an HTTP error or a dead daemon throws a CliError. */
  async callTool<T>(name: string, args: Record<string, unknown> = {}): Promise<T> {
    this.era ??= offersStateless(this.url, this.headers, CALL_TIMEOUT_MS).then((offered) =>
      offered ? 'stateless' : 'session',
    );
    let era: 'stateless' | 'session';
    try {
      era = await this.era;
    } catch (error) {
      this.era = null;
      throw this.describeFailure(error);
    }
    const result = era === 'stateless' ? await this.callStateless(name, args) : await this.callInSession(name, args);
    const structured = result.structuredContent;
    if (result.isError) {
      const refusal = structured?.error as { code?: string; message?: string } | undefined;
      const text = (result.content as Array<{ text?: string }>).map((part) => part.text ?? '').join('');
      if (refusal?.code === 'ERR_UNKNOWN_TASK' && typeof args.id === 'string') {
        throw new CliError(
          `no task has the id ${JSON.stringify(args.id)}; hive-bash list shows the ids of known tasks`,
          1,
          refusal.code,
        );
      }
      throw new CliError(refusal?.message ?? text, 1, refusal?.code ?? null);
    }
    return structured as T;
  }

  private async callStateless(name: string, args: Record<string, unknown>): Promise<ToolCallResult> {
    try {
      return await callStatelessTool(this.url, this.headers, name, args, CALL_TIMEOUT_MS);
    } catch (error) {
      throw this.describeFailure(error);
    }
  }

  private async callInSession(name: string, args: Record<string, unknown>): Promise<ToolCallResult> {
    try {
      if (this.session === null) {
        const { SessionClient } = await import('./session-client.js');
        this.session = new SessionClient(this.url, this.headers, VERSION);
      }
      return await this.session.callTool(name, args, CALL_TIMEOUT_MS);
    } catch (error) {
      throw this.describeFailure(error);
    }
  }

  /** GET `path` on the daemon's origin (e.g. /healthz) as JSON, with the token; null for a 404 when `optional`. */
  async getJson<T>(path: string, optional: true): Promise<T | null>;
  async getJson<T>(path: string, optional?: false): Promise<T>;
  async getJson<T>(path: string, optional = false): Promise<T | null> {
    const target = new URL(path, this.url);
    let response: Response;
    try {
      response = await fetch(target, { headers: this.headers });
    } catch (error) {
      throw this.describeFailure(error);
    }
    if (response.status === 404 && optional) return null;
    if (!response.ok) throw this.describeStatus(response.status, (await response.text()).trim(), target);
    return (await response.json()) as T;
  }

  /**
   * POST `path` on the daemon's origin (an operator's route, e.g. /approvals/ID/approve), with the
   * token: its JSON answer; a refusal ({error: {code, message}}) throws a CliError with its words.
   */
  async postJson<T>(path: string): Promise<T> {
    const target = new URL(path, this.url);
    let response: Response;
    try {
      response = await fetch(target, { method: 'POST', headers: this.headers });
    } catch (error) {
      throw this.describeFailure(error);
    }
    const text = await response.text();
    type Answer = { error?: { code?: string; message?: string } };
    let body: Answer | null = null;
    try {
      body = JSON.parse(text) as Answer;
    } catch {
      // not the daemon's JSON: told by its status below
    }
    if (response.ok && body !== null) return body as T;
    if (body?.error?.message !== undefined) throw new CliError(body.error.message, 1, body.error.code ?? null);
    throw this.describeStatus(response.status, text.trim(), target);
  }

  /** Ends the MCP session, if a 2025 one was opened (so the daemon need not keep it), and closes the connection. */
  async close(): Promise<void> {
    await this.session?.close();
  }

  /** One clear sentence for whatever went wrong between us and the daemon. */
  private describeFailure(error: unknown): CliError {
    if (error instanceof CliError) return error;
    if (error instanceof HttpStatusError) return this.describeStatus(error.status, error.body.trim(), this.url);
    if (error instanceof RpcAnswerError)
      return new CliError(`the daemon at ${this.url.href} refused the call: ${error.message}`);
    let code = networkCode(error);
    // fetch's own refusals (a port it blocks, a bad address) carry no errno.
    if (code === null && error instanceof TypeError && error.message === 'fetch failed')
      code = (error.cause as Error | undefined)?.message ?? error.message;
    if (code !== null) {
      return new UnreachableError(
        `cannot reach the daemon at ${this.url.href} (${code}); is it running? Give its address with --url or HIVE_BASH_URL`,
      );
    }
    const message = error instanceof Error ? error.message : String(error);
    if (/closed|aborted|terminated/i.test(message)) {
      return new UnreachableError(
        `the daemon at ${this.url.href} closed the connection (${message}); is it still running?`,
      );
    }
    return new CliError(`the call to the daemon at ${this.url.href} failed: ${message}`);
  }

  private describeStatus(status: number, body: string, target: URL): CliError {
    if (status === 401) {
      const given =
        this.options.tokenFile === null ? 'no token was sent' : `the token in ${this.options.tokenFile} was refused`;
      return new CliError(
        `the daemon at ${target.href} requires a bearer token and ${given} (401); give --token-file (or HIVE_BASH_TOKEN_FILE) naming the file of its --auth-token-file`,
      );
    }
    if (status === 404) {
      return new UnreachableError(
        `nothing at ${target.href} (404 ${body.split('\n')[0]}); --url must name the daemon's MCP endpoint, e.g. ${DEFAULT_URL}`,
      );
    }
    return new CliError(`the daemon at ${target.href} answered ${status}: ${body.split('\n')[0] || 'no reason given'}`);
  }
}

function parseDaemonUrl(text: string): URL {
  let url: URL | null = null;
  try {
    url = new URL(text);
  } catch {
    // refused below
  }
  if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new UsageError(
      `--url must be an http:// or https:// URL of the daemon's MCP endpoint, e.g. ${DEFAULT_URL}; got ${JSON.stringify(text)}`,
    );
  }
  return url;
}

function readToken(path: string): string {
  let token: string;
  try {
    token = readRegularFile(path, TOKEN_FILE).trim();
  } catch (error) {
    // "cannot be read: ENOENT: no such file ..." as the code alone, the rest as said.
    const why = (error as Error).message.replace(/^cannot be read: ([A-Z]+): .*$/, 'cannot be read ($1)');
    throw new CliError(
      `--token-file ${JSON.stringify(path)} ${why}; it must name a readable file holding the daemon's token`,
    );
  }
  if (token.length === 0)
    throw new CliError(`--token-file ${JSON.stringify(path)} is empty; it must hold the daemon's token`);
  return token;
}

/** The errno-like code of a failed connection anywhere in an error's cause chain, or null. */
function networkCode(error: unknown): string | null {
  type Link = { code?: unknown; cause?: unknown; errors?: unknown } | null | undefined;
  for (let current = error as Link, depth = 0; current && depth < 5; current = current.cause as Link, depth++) {
    if (typeof current.code === 'string' && NETWORK_ERROR_CODES.has(current.code)) return current.code;
    if (Array.isArray(current.errors)) {
      const inner = current.errors.map(networkCode).find((code) => code !== null);
      if (inner) return inner;
    }
  }
  return null;
}
