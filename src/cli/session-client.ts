// The CLI's 2025-era session, for a daemon that does not offer 2026-07-28: the SDK's client,
// imported only then, never with every command (the SDK and its zod would be most of the start-up
// time of a command such as `hive-bash --help`).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { HttpStatusError, type ToolCallResult } from './stateless-client.js';

export class SessionClient {
  private session: { client: Client; transport: StreamableHTTPClientTransport } | null = null;

  constructor(
    private readonly url: URL,
    private readonly headers: Record<string, string>,
    private readonly version: string,
  ) {}

  /** Calls tool `name`; an HTTP status the daemon answered is thrown as an HttpStatusError. */
  async callTool(name: string, args: Record<string, unknown>, timeoutMs: number): Promise<ToolCallResult> {
    const call = async () =>
      (await (
        await this.connect()
      ).callTool({ name, arguments: args }, undefined, {
        timeout: timeoutMs,
      })) as ToolCallResult;
    try {
      return await call();
    } catch (error) {
      // A restarted daemon no longer knows our session (404): open a new one, once.
      if (!(error instanceof StreamableHTTPError && error.code === 404 && this.session !== null)) throw plain(error);
      await this.close();
      try {
        return await call();
      } catch (retryError) {
        throw plain(retryError);
      }
    }
  }

  /** Ends the session (so the daemon need not keep it) and closes the connection. */
  async close(): Promise<void> {
    const session = this.session;
    this.session = null;
    if (session === null) return;
    await session.transport.terminateSession().catch(() => {});
    await session.client.close().catch(() => {});
  }

  private async connect(): Promise<Client> {
    if (this.session !== null) return this.session.client;
    const client = new Client({ name: 'hive-bash', version: this.version });
    const transport = new StreamableHTTPClientTransport(this.url, { requestInit: { headers: this.headers } });
    try {
      await client.connect(transport);
    } catch (error) {
      await client.close().catch(() => {});
      throw plain(error);
    }
    this.session = { client, transport };
    return client;
  }
}

/** The SDK's HTTP error as the status and body the daemon answered; any other error as it is. */
function plain(error: unknown): unknown {
  if (error instanceof StreamableHTTPError && typeof error.code === 'number' && error.code > 0)
    return new HttpStatusError(
      error.code,
      error.message.replace(/^(Streamable HTTP error: )?Error POSTing to endpoint: /, ''),
    );
  return error;
}
