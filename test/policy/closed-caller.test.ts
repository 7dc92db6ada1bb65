// A task cannot pass for an outside caller by letting go of its connection once it has sent: a
// task that sends an approve (or a run) and puts its socket in flight (held by no fd, passed to
// itself in a unix socket's message, as a process that exits leaves it for a moment), half-closed
// or still open for the answer, before the daemon looks is refused as the most restricted caller.
// The daemon is stopped while the task does so, so that it looks after: by order, not by luck. It
// runs without CAP_SYS_PTRACE (as in a container), so the test's own processes are ones it cannot
// look into, which might hold the socket; and in a cgroup v2 of its own, which its tasks share (as a
// service's), so that the test's own calls, made in another, are outside ones.
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { createTestCgroupRoot, listTaskCgroups, removeTestCgroupRoot } from '../helpers/cgroups.js';
import { connectClient, type ToolClient } from '../helpers/mcp-client.js';
import { waitFor } from '../helpers/processes.js';
import { makeScratchDir } from '../helpers/scratch.js';
import { listApprovals, startPolicyDaemon, waitForApprovals, type PolicyDaemon } from './policy-daemon.js';

/**
 * `python3 SCRIPT PORT DIR`: connects, says `ready`, and once `go` is there sends $REQUEST,
 * half-closes where $SHUT is 1, lets go of the socket (in flight to itself) and says `sent`.
 */
const LET_GO = `
import os, socket, sys, time
port, dir = int(sys.argv[1]), sys.argv[2]
if 'MAKER_SOCKET' in os.environ:
    # The connection is made by another task (MAKER), which passes it here and ends.
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(os.environ['MAKER_SOCKET'])
    listener.listen(1)
    _, fds, _, _ = socket.recv_fds(listener.accept()[0], 1, 1)
    s = socket.socket(fileno=fds[0])
else:
    s = socket.create_connection(('127.0.0.1', port))
open(os.path.join(dir, 'ready'), 'w').close()
while not os.path.exists(os.path.join(dir, 'go')): time.sleep(0.01)
s.sendall(os.environ['REQUEST'].encode())
if os.environ['SHUT'] == '1': s.shutdown(socket.SHUT_WR)
a, b = socket.socketpair()
socket.send_fds(a, [b'x'], [s.fileno()])
s.close()
open(os.path.join(dir, 'sent'), 'w').close()
time.sleep(60)
`;

/** \`python3 SCRIPT PORT PATH\`: connects to the daemon, passes the connection to the unix socket at PATH, and ends. */
const MAKER = `
import socket, sys, time
s = socket.create_connection(('127.0.0.1', int(sys.argv[1])))
u = socket.socket(socket.AF_UNIX)
while u.connect_ex(sys.argv[2]) != 0: time.sleep(0.01)
socket.send_fds(u, [b'x'], [s.fileno()])
`;

/** A raw HTTP request to the daemon's `path`, with `body` (JSON) and `headers`. */
function rawRequest(daemon: PolicyDaemon, path: string, body = '', headers: string[] = []): string {
  const host = new URL(daemon.url).host;
  const head = [`POST ${path} HTTP/1.1`, `host: ${host}`, ...headers, `content-length: ${Buffer.byteLength(body)}`];
  return `${head.join('\r\n')}\r\n\r\n${body}`;
}

/**
 * Runs LET_GO in a task (sandboxed to write only in `dir`, if `sandboxed`) and lets it send `request`
 * (half-closing its socket if `shut`) while the daemon is stopped.
 */
async function sendAndLetGo(
  daemon: PolicyDaemon,
  tools: ToolClient,
  request: string,
  dir: string,
  { sandboxed, shut, made }: { sandboxed: boolean; shut: boolean; made?: (dir: string) => Promise<void> },
) {
  const script = join(dir, 'let-go.py');
  writeFileSync(script, LET_GO);
  const port = new URL(daemon.url).port;
  const sandbox = sandboxed ? { sandbox: { write: [dir] } } : {};
  const maker = made === undefined ? {} : { MAKER_SOCKET: join(dir, 'maker.sock') };
  const env = { REQUEST: request, SHUT: shut ? '1' : '0', ...maker };
  await tools.ok('run', { command: `python3 ${script} ${port} ${dir}`, env, ...sandbox });
  await made?.(dir);
  assert.ok(await waitFor(() => existsSync(join(dir, 'ready')), 20_000), 'the task connected');
  const pid = daemon.child.pid!;
  process.kill(pid, 'SIGSTOP');
  let sent: boolean;
  try {
    writeFileSync(join(dir, 'go'), '');
    sent = await waitFor(() => existsSync(join(dir, 'sent')), 20_000);
  } finally {
    process.kill(pid, 'SIGCONT');
  }
  assert.ok(sent, 'the task sent and let go of its socket');
}

const REFUSED = /cannot tell which task, if any, made a call/;
const WRAPPER = ['setpriv', '--bounding-set', '-sys_ptrace', '--'];

/** A process-group daemon without CAP_SYS_PTRACE, in a cgroup v2 folder of its own (removed after it); null where none can be made. */
async function startDaemonInOwnCgroup(t: TestContext): Promise<PolicyDaemon | null> {
  const cgroup = createTestCgroupRoot(`closed-caller-${process.pid}-${Date.now()}`);
  if (cgroup === null) return null;
  const wrapper = ['sh', '-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', cgroup, ...WRAPPER];
  try {
    return await startPolicyDaemon(t, { containment: 'process-group', wrapper });
  } finally {
    t.after(() => removeTestCgroupRoot(cgroup)); // after the daemon's own teardown: hooks run in order
  }
}

for (const shut of [true, false]) {
  const how = shut ? 'half-closes' : 'keeps open';
  test(`a task that sends an approve and lets go of its socket (${how}) before the daemon looks cannot approve`, async (t) => {
    const daemon = await startDaemonInOwnCgroup(t);
    if (daemon === null) return t.skip('no cgroup v2 folder can be made here');
    const tools = await connectClient(t, daemon.url);
    const waiting = await tools.ok('run', { command: 'hive-asked waiting', env: daemon.env, wait_seconds: 0 });
    const [approval] = await waitForApprovals(daemon, waiting.id);
    const request = rawRequest(daemon, `/approvals/${approval!.id}/approve`);
    await sendAndLetGo(daemon, tools, request, makeScratchDir(t, 'let-go'), { sandboxed: false, shut });
    const waits = async () => (await listApprovals(daemon)).some((exec) => exec.id === approval!.id);
    await waitFor(async () => REFUSED.test(daemon.stderr()) || !(await waits()), 20_000);
    assert.ok(await waits(), 'the exec still waits for a person');
    assert.match(daemon.stderr(), REFUSED);
  });

  test(`a sandboxed task that sends a run and lets go of its socket (${how}) gets no run outside its sandbox`, async (t) => {
    const daemon = await startDaemonInOwnCgroup(t);
    if (daemon === null) return t.skip('no cgroup v2 folder can be made here');
    const tools = await connectClient(t, daemon.url);
    const [inside, outside] = [makeScratchDir(t, 'inside'), makeScratchDir(t, 'outside')];
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    const call = { name: 'run', arguments: { command: `touch ${outside}/escaped` }, _meta: meta };
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: call });
    const headers = [
      'content-type: application/json',
      'accept: application/json, text/event-stream',
      'mcp-protocol-version: 2026-07-28',
      'mcp-method: tools/call',
      'mcp-name: run',
    ];
    const request = rawRequest(daemon, new URL(daemon.url).pathname, body, headers);
    await sendAndLetGo(daemon, tools, request, inside, { sandboxed: true, shut });
    const runs = async () =>
      ((await tools.ok('list', {})).tasks as Array<{ command: string }>).filter((task) =>
        task.command.startsWith('touch'),
      );
    await waitFor(async () => REFUSED.test(daemon.stderr()) || (await runs()).length > 0, 20_000);
    assert.deepEqual(await runs(), [], 'no run was made');
    assert.ok(!existsSync(join(outside, 'escaped')));
    assert.match(daemon.stderr(), REFUSED);
  });
}

test('a task cannot approve with a connection another task made and ended, its cgroup gone, in flight', async (t) => {
  const daemon = await startPolicyDaemon(t, { containment: 'cgroup' });
  if (daemon.cgroupRoot === null) return t.skip('no writable cgroup v2 here');
  const tools = await connectClient(t, daemon.url);
  const waiting = await tools.ok('run', { command: 'hive-asked waiting', env: daemon.env, wait_seconds: 0 });
  const [approval] = await waitForApprovals(daemon, waiting.id);
  const request = rawRequest(daemon, `/approvals/${approval!.id}/approve`);
  // The maker connects, passes its connection to the holder and ends; its cgroup is then removed.
  const made = async (dir: string) => {
    writeFileSync(join(dir, 'maker.py'), MAKER);
    const cgroups = listTaskCgroups(daemon.cgroupRoot!).length;
    const port = new URL(daemon.url).port;
    const maker = await tools.ok('run', {
      command: `python3 ${join(dir, 'maker.py')} ${port} ${join(dir, 'maker.sock')}`,
    });
    await tools.statusWhen(maker.id, (view) => view.state !== 'running', 'the maker ended', 20_000);
    assert.ok(
      await waitFor(() => listTaskCgroups(daemon.cgroupRoot!).length === cgroups, 20_000),
      "the maker's cgroup is gone",
    );
  };
  await sendAndLetGo(daemon, tools, request, makeScratchDir(t, 'let-go'), { sandboxed: false, shut: false, made });
  const waits = async () => (await listApprovals(daemon)).some((exec) => exec.id === approval!.id);
  await waitFor(async () => REFUSED.test(daemon.stderr()) || !(await waits()), 20_000);
  assert.ok(await waits(), 'the exec still waits for a person');
  assert.match(daemon.stderr(), /"caller":"a socket made in a cgroup that is gone/);
});
