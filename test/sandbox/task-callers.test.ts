// Calls that come from the daemon's own tasks: a sandboxed task that POSTs run to the daemon over
// loopback (as 2026-07-28, as a 2025 session with and without a _meta, and through hive-bash)
// gets a task no wider than itself, which the kernel holds to it; a wider one is refused; with
// --tasks-may-call off every request of a task is refused; a process of a task whose shim is gone
// is refused run; the test process, outside every task, is served as before.
import assert from 'node:assert/strict';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { CLI_JS } from '../cli/cli.js';
import { nativeContainment, startTestDaemon, type TestContainment } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { waitFor } from '../helpers/processes.js';

function makeDir(t: TestContext, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `hive-bash-${prefix}-`));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * `node call.mjs URL ERA ARGS [TOOL]`: calls run (or TOOL) with the JSON ARGS as 2026-07-28 (`modern`) or in a 2025
 * session, plain (`session`) or with a _meta (`session-meta`); prints one line: the HTTP status, and the run's sandbox, its
 * state, its stderr and any error (asked verbose: a result leaves out null members otherwise).
 */
const CALL_SCRIPT = `
const [url, era, json, tool = 'run'] = process.argv.slice(2);
const base = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const post = async (body, headers = {}) => {
  const res = await fetch(url, { method: 'POST', headers: { ...base, ...headers }, body: JSON.stringify(body) });
  return { status: res.status, session: res.headers.get('mcp-session-id'), text: await res.text() };
};
const call = { name: tool, arguments: { ...(tool === 'run' && { verbose: true }), ...JSON.parse(json) } };
let answer;
if (era === 'modern') {
  const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
  const headers = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': tool };
  answer = await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { ...call, _meta: meta } }, headers);
} else {
  const params = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } };
  answer = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params });
  if (answer.status === 200) {
    const sent = era === 'session-meta' ? { ...call, _meta: {} } : call;
    answer = await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: sent }, { 'mcp-session-id': answer.session });
  }
}
const result = answer.status === 200 ? JSON.parse(answer.text).result?.structuredContent : undefined;
console.log(JSON.stringify(result === undefined ? { era, status: answer.status, text: answer.text.trim() } : {
  era, status: answer.status, sandbox: result.sandbox, state: result.state, stderr: result.stderr_tail, error: result.error,
}));
`;

interface CallLine {
  era: string;
  status: number;
  sandbox?: unknown;
  state?: string;
  stderr?: string;
  error?: { code: string; message: string };
  text?: string;
}

/** A folder with the call script, readable by tasks. */
function writeCallScript(t: TestContext): string {
  const script = join(makeDir(t, 'caller'), 'call.mjs');
  writeFileSync(script, CALL_SCRIPT);
  return script;
}

/** A shell command that calls run with `args` once per era, one line each. */
function callsInEveryEra(script: string, url: string, args: object): string {
  const json = JSON.stringify(args).replaceAll("'", "'\\''");
  return ['modern', 'session', 'session-meta']
    .map((era) => `'${process.execPath}' '${script}' '${url}' ${era} '${json}'`)
    .join('; ');
}

const parseLines = (text: string): CallLine[] =>
  text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as CallLine);

for (const containment of ['cgroup', 'process-group'] as TestContainment[]) {
  describe(`containment ${containment}`, () => {
    test('a run a sandboxed task asks for gets its sandbox, in either era and through hive-bash, and writes only inside it', async (t) => {
      const [inside, outside] = [makeDir(t, 'inside'), makeDir(t, 'outside')];
      const victim = join(outside, 'victim.txt');
      writeFileSync(victim, 'as it was\n');
      const before = statSync(victim, { bigint: true });
      const script = writeCallScript(t);
      const daemon = await startTestDaemon(t, { containment });
      const tools = await connectClient(t, daemon.url);
      const sandbox = { write: [inside], network: true };
      const inner = (name: string) => ({
        command: `touch ${inside}/${name} && echo ${name} >> ${victim}; touch ${outside}/${name}`,
        wait_seconds: 20,
      });
      const cli = `HIVE_BASH_URL='${daemon.url}' '${process.execPath}' '${CLI_JS}' --json run --wait 20 -- 'touch ${inside}/cli && echo cli >> ${victim}; touch ${outside}/cli' > ${inside}/cli.json`;
      const outer = await tools.ok('run', {
        command: `${callsInEveryEra(script, daemon.url, inner('era'))}; ${cli}`,
        sandbox,
        wait_seconds: 30,
      });
      assert.equal(outer.state, 'done', outer.stderr_tail);
      const lines = parseLines(outer.stdout_tail);
      assert.deepEqual(
        lines.map((line) => line.era),
        ['modern', 'session', 'session-meta'],
      );
      for (const line of lines) {
        assert.deepEqual([line.status, line.state, line.sandbox], [200, 'done', sandbox], JSON.stringify(line));
        // Refused by the kernel: Landlock (EACCES), or the read-only mounts of a sandboxed task's own namespace (EROFS).
        assert.match(line.stderr!, /victim\.txt: (Permission denied|Read-only file system)\n/);
        assert.match(line.stderr!, /touch: cannot touch '.*\/era': (Permission denied|Read-only file system)/);
      }
      const viaCli = JSON.parse(readFileSync(join(inside, 'cli.json'), 'utf8')) as { sandbox: unknown; state: string };
      assert.deepEqual([viaCli.state, viaCli.sandbox], ['done', sandbox]);
      assert.ok(existsSync(join(inside, 'era')) && existsSync(join(inside, 'cli')), 'they wrote inside');
      assert.ok(!existsSync(join(outside, 'era')) && !existsSync(join(outside, 'cli')), 'nothing was written outside');
      const after = statSync(victim, { bigint: true });
      assert.equal(readFileSync(victim, 'utf8'), 'as it was\n');
      assert.deepEqual(
        [after.mtimeNs, after.ctimeNs],
        [before.mtimeNs, before.ctimeNs],
        'the file outside is untouched',
      );

      const operator = await tools.ok('run', { command: `touch ${outside}/operator`, wait_seconds: 20 });
      assert.deepEqual([operator.exit_code, operator.sandbox], [0, null], 'a call from outside the tasks is as before');
      assert.ok(existsSync(join(outside, 'operator')));
    });

    test('a sandboxed task cannot write to the stdin of a task less confined than itself; to one as confined, it can', async (t) => {
      const [inside, outside] = [makeDir(t, 'inside'), makeDir(t, 'outside')];
      const script = writeCallScript(t);
      const daemon = await startTestDaemon(t, { containment });
      const tools = await connectClient(t, daemon.url);
      // Two shells that run what their stdin says: one free, one in the caller's own sandbox.
      const free = await tools.ok('run', { command: 'bash', interactive: true, wait_seconds: 0 });
      const confined = await tools.ok('run', {
        command: 'bash',
        interactive: true,
        sandbox: { write: [inside] },
        wait_seconds: 0,
      });
      const input = (id: unknown, file: string) =>
        `'${process.execPath}' '${script}' '${daemon.url}' modern '${JSON.stringify({ id, text: `touch ${file}\n` })}' input`;
      const outer = await tools.ok('run', {
        command: `${input(free.id, join(outside, 'pwn'))}; ${input(confined.id, join(inside, 'ok'))}`,
        sandbox: { write: [inside] },
        wait_seconds: 30,
      });
      assert.equal(outer.state, 'done', outer.stderr_tail);
      const [toFree, toConfined] = parseLines(outer.stdout_tail);
      assert.equal(toFree!.error?.code, 'ERR_INPUT_NOT_ALLOWED', JSON.stringify(toFree));
      assert.match(
        toFree!.error.message,
        new RegExp(
          `^input to task "${String(free.id)}" refused: the call comes from task ${String(outer.id)}, whose sandbox allows at most: write beneath ${inside}; network; task ${String(free.id)} is not confined within it \\(it runs with no sandbox\\)`,
        ),
      );
      assert.equal(toConfined!.error, undefined, JSON.stringify(toConfined));
      // Both shells read to their end: what the refused input would have done is not done.
      for (const id of [free.id, confined.id]) await tools.ok('input', { id, text: '', eof: true });
      for (const id of [free.id, confined.id]) await tools.ok('status', { id, wait_seconds: 20 });
      assert.ok(existsSync(join(inside, 'ok')), 'the input to a task as confined ran');
      assert.ok(!existsSync(join(outside, 'pwn')), 'the input to the free task was refused, so nothing ran outside');
    });

    test('a sandboxed task asking for a wider sandbox is refused, naming its own as the limit; a narrower one runs', async (t) => {
      const [inside, outside] = [makeDir(t, 'inside'), makeDir(t, 'outside')];
      mkdirSync(join(inside, 'sub'));
      const script = writeCallScript(t);
      const daemon = await startTestDaemon(t, { containment });
      const tools = await connectClient(t, daemon.url);
      const call = (args: object) =>
        `'${process.execPath}' '${script}' '${daemon.url}' modern '${JSON.stringify(args)}'`;
      const outer = await tools.ok('run', {
        command: [
          call({ command: `touch ${outside}/wider`, sandbox: { write: [outside] }, wait_seconds: 20 }),
          call({ command: `touch ${outside}/root`, sandbox: { write: ['/'] }, wait_seconds: 20 }),
          call({
            command: `touch ${inside}/sub/narrower`,
            sandbox: { write: [join(inside, 'sub')] },
            wait_seconds: 20,
          }),
        ].join('; '),
        sandbox: { write: [inside] },
        wait_seconds: 30,
      });
      const [wider, root, narrower] = parseLines(outer.stdout_tail);
      const id = outer.id as string;
      for (const [line, dir] of [
        [wider!, outside],
        [root!, '/'],
      ] as const) {
        assert.deepEqual(line.error, {
          code: 'ERR_SANDBOX_NOT_ALLOWED',
          message: `Invalid run input: "sandbox" is wider than the sandbox of task ${id}, which made this call: it lets the task write in ${dir} ("sandbox.write[0]"), and that sandbox allows at most: write beneath ${inside}; network; nothing was started: ask for no more than that`,
        });
      }
      assert.deepEqual([narrower!.state, narrower!.sandbox], ['done', { write: [join(inside, 'sub')], network: true }]);
      assert.ok(existsSync(join(inside, 'sub', 'narrower')));
      assert.ok(!existsSync(join(outside, 'wider')) && !existsSync(join(outside, 'root')));

      const unsandboxed = await tools.ok('run', {
        command: call({ command: `touch ${outside}/free`, wait_seconds: 20 }),
        wait_seconds: 30,
      });
      const [free] = parseLines(unsandboxed.stdout_tail);
      assert.deepEqual([free!.state, free!.sandbox], ['done', null], 'an unsandboxed task asks for what it likes');
      assert.ok(existsSync(join(outside, 'free')));
    });

    test('--tasks-may-call off refuses every request of a task with 403; the operator is served', async (t) => {
      const [inside, outside] = [makeDir(t, 'inside'), makeDir(t, 'outside')];
      const script = writeCallScript(t);
      const daemon = await startTestDaemon(t, { containment, args: ['--tasks-may-call', 'off'] });
      const tools = await connectClient(t, daemon.url);
      const cli = `HIVE_BASH_URL='${daemon.url}' '${process.execPath}' '${CLI_JS}' list; echo "cli exit $?"`;
      for (const sandbox of [{ write: [inside] }, undefined]) {
        const outer = await tools.ok('run', {
          command: `${callsInEveryEra(script, daemon.url, { command: `touch ${outside}/never` })}; ${cli}; curl -s -o /dev/null -w '%{http_code}\\n' ${daemon.origin}/healthz`,
          ...(sandbox && { sandbox }),
          wait_seconds: 30,
        });
        const [modern, session, meta, cliExit, health] = outer.stdout_tail.trim().split('\n') as string[];
        // Where tasks have cgroups, the socket's tells the task, and no process is read.
        const from = containment === 'cgroup' ? 'a socket made in the cgroup' : 'process \\d+';
        const refusal = new RegExp(
          `^Forbidden: this request comes from ${from} of task ${outer.id}, and this daemon takes no requests from its own tasks \\(--tasks-may-call off\\)$`,
        );
        for (const line of [modern, session, meta].map((text) => JSON.parse(text!) as CallLine)) {
          assert.equal(line.status, 403, JSON.stringify(line));
          assert.match(line.text!, refusal);
        }
        assert.equal(cliExit, 'cli exit 1');
        assert.match(outer.stderr_tail, new RegExp(`answered 403: Forbidden: this request comes from ${from} of task`));
        assert.equal(health, '403');
      }
      assert.ok(!existsSync(join(outside, 'never')));
      const operator = await tools.ok('run', { command: `touch ${outside}/operator`, wait_seconds: 20 });
      assert.equal(operator.exit_code, 0);
      const healthz = (await (await fetch(`${daemon.origin}/healthz`)).json()) as {
        sandbox: { tasks_may_call: string };
      };
      assert.equal(healthz.sandbox.tasks_may_call, 'off');
    });
  });
}

/** The children of process `pid`, from each of its threads. */
function childrenOf(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((thread) =>
    readFileSync(`/proc/${pid}/task/${thread}/children`, 'latin1').split(' ').filter(Boolean).map(Number),
  );
}

/** The tasks' init of the daemon `daemonPid`: the child of its hive-task-init child. */
function tasksInitOf(daemonPid: number): number {
  const outer = childrenOf(daemonPid).find((pid) => readFileSync(`/proc/${pid}/comm`, 'latin1') === 'hive-task-init\n');
  assert.ok(outer !== undefined, "the daemon has started its tasks' init");
  const [init] = childrenOf(outer);
  assert.ok(init !== undefined, 'the init runs');
  return init;
}

test('a process of a task whose shim is gone cannot be told apart: its run is refused', async (t) => {
  const [inside, outside] = [makeDir(t, 'inside'), makeDir(t, 'outside')];
  const script = writeCallScript(t);
  const daemon = await startTestDaemon(t, { containment: 'process-group' });
  const health = (await (await fetch(`${daemon.origin}/healthz`)).json()) as {
    task_isolation: { namespace: { in_force: boolean } };
  };
  if (!health.task_isolation.namespace.in_force) return t.skip("no tasks' namespace here (the daemon is not root)");
  const tools = await connectClient(t, daemon.url);
  const call = `'${process.execPath}' '${script}' '${daemon.url}' modern '${JSON.stringify({ command: `touch ${outside}/orphan`, wait_seconds: 20 })}'`;
  // Without its shim the daemon kills what carries the task's run marker, and the tasks' init every
  // process handed to it: the orphan drops its environment (env -i) before the shim is killed, lives
  // on while the test holds the init stopped, and waits for the go-ahead, given once its task has
  // ended (for at most a minute: the namespace ends with the daemon anyway).
  const wait = `for i in $(seq 1200); do [ -e ${inside}/go ] && break; sleep 0.05; done`;
  const orphan = `touch ${inside}/ready; ${wait}; ${call} > ${inside}/answer.tmp; mv ${inside}/answer.tmp ${inside}/answer`;
  // The test kills the shim: a sandboxed task may signal no process outside its sandbox, its shim included.
  const started = await tools.ok('run', {
    command: `setsid env -i bash -c '${orphan.replaceAll("'", "'\\''")}' & sleep 600`,
    sandbox: { write: [inside] },
    wait_seconds: 0,
  });
  assert.ok(await waitFor(() => existsSync(join(inside, 'ready')), 30_000), 'the orphan is ready');
  const init = tasksInitOf(daemon.child.pid!);
  t.after(() => process.kill(init, 'SIGCONT'));
  process.kill(init, 'SIGSTOP');
  // Its leader's parent (the task's pid is the leader's on the host).
  const stat = readFileSync(`/proc/${started.pid}/stat`, 'latin1');
  process.kill(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]), 'SIGKILL');
  const task = await tools.statusWhen(started.id, (view) => view.state !== 'running', 'the task ended', 30_000);
  assert.match(task.error ?? '', /shim was killed/);
  writeFileSync(join(inside, 'go'), '');
  assert.ok(await waitFor(() => existsSync(join(inside, 'answer')), 30_000), 'the orphan called the daemon');
  const [answer] = parseLines(readFileSync(join(inside, 'answer'), 'utf8'));
  assert.equal(answer!.error?.code, 'ERR_CALLER_UNKNOWN', JSON.stringify(answer));
  assert.match(
    answer!.error.message,
    /^run refused: the call comes from process \d+, which descends from the daemon's tasks but from no task it holds \(its shim is gone\), so which of the daemon's tasks made it, and whose sandbox bounds it, cannot be told; nothing was done: /,
  );
  assert.ok(!existsSync(join(outside, 'orphan')));
});

test('a sandboxed task that sends run and resets its connection at once gets no run wider than its sandbox', async (t) => {
  const [inside, outside] = [makeDir(t, 'inside'), makeDir(t, 'outside')];
  const daemon = await startTestDaemon(t, { containment: nativeContainment() });
  const tools = await connectClient(t, daemon.url);
  const url = new URL(daemon.url);
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: {
      name: 'run',
      arguments: { command: `touch ${outside}/reset` },
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  });
  const request = [
    `POST ${url.pathname} HTTP/1.1`,
    `host: ${url.host}`,
    'content-type: application/json',
    'accept: application/json, text/event-stream',
    'mcp-protocol-version: 2026-07-28',
    'mcp-method: tools/call',
    'mcp-name: run',
    `content-length: ${Buffer.byteLength(body)}`,
    '',
    body,
  ].join('\r\n');
  // The whole request, then a reset: the caller's socket leaves the kernel's table at once. The
  // daemon may see the reset before the end of the body (then no one is answered, and nothing
  // done): twenty tries, one after the other, for one that it takes.
  const script = `const net = require('net');
(async () => {
  for (let i = 0; i < 20; i++)
    await new Promise((done) => {
      const s = net.connect(${url.port}, '${url.hostname}', () => s.write(${JSON.stringify(request)}, () => (s.resetAndDestroy(), done())));
      s.on('error', done);
    });
})();`;
  await tools.ok('run', {
    command: `'${process.execPath}' -e "$SCRIPT"`,
    env: { SCRIPT: script },
    sandbox: { write: [inside] },
    wait_seconds: 30,
  });
  // The daemon takes a call as its task's (when it looks before the reset) or as an unknown
  // caller's (after); never as an outside one's.
  const started = async () =>
    ((await tools.ok('list', {})).tasks as Array<{ id: string; command: string }>).filter(
      (task) => task.command === `touch ${outside}/reset`,
    );
  const refused = () => daemon.stderr().includes('cannot tell which task, if any, made a call');
  assert.ok(
    await waitFor(async () => refused() || (await started()).length > 0 || existsSync(join(outside, 'reset')), 30_000),
    'the daemon took a call',
  );
  for (const task of await started())
    assert.deepEqual((await tools.ok('status', { id: task.id })).sandbox, { write: [inside], network: true });
  assert.ok(!existsSync(join(outside, 'reset')), 'a call ran outside the sandbox');
  if (refused())
    assert.match(
      daemon.stderr(),
      /"caller":"a connection (its caller has reset and left|its caller has closed|whose calling end no process holds)/,
    );
});

/**
 * `python3 SCRIPT PORT`: connects to the daemon, then forks three processes that hold 4,000 fds
 * each (newer than itself, so a lookup's scan reads theirs first), sends a stateless `run` of `true`
 * and prints the answer's body.
 */
const MANY_FDS = `
import json, os, resource, socket, sys, time
port = int(sys.argv[1])
_, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
s = socket.create_connection(('127.0.0.1', port))
r, w = os.pipe()
for _ in range(3):
    if os.fork() == 0:
        s.close()
        null = os.open('/dev/null', os.O_RDONLY)
        for _ in range(4000): os.dup(null)
        os.write(w, b'x')
        time.sleep(120)
        os._exit(0)
for _ in range(3): os.read(r, 1)
meta = {'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {}}
body = json.dumps({'jsonrpc': '2.0', 'id': 1, 'method': 'tools/call', 'params': {'name': 'run', 'arguments': {'command': 'true'}, '_meta': meta}})
head = ['POST /mcp HTTP/1.1', 'host: 127.0.0.1:%d' % port, 'content-type: application/json', 'accept: application/json, text/event-stream', 'mcp-protocol-version: 2026-07-28', 'mcp-method: tools/call', 'mcp-name: run', 'connection: close', 'content-length: %d' % len(body)]
s.sendall(('\\r\\n'.join(head) + '\\r\\n\\r\\n' + body).encode())
answer = b''
while chunk := s.recv(65536): answer += chunk
print(answer.decode().split('\\r\\n\\r\\n', 1)[1])
`;

test("a lookup reads a bounded number of fds: a task's processes holding more cannot hold the daemon's thread", async (t) => {
  const dir = makeDir(t, 'many-fds');
  writeFileSync(join(dir, 'many-fds.py'), MANY_FDS);
  const daemon = await startTestDaemon(t, { containment: 'process-group' });
  const tools = await connectClient(t, daemon.url);
  const port = new URL(daemon.url).port;
  const task = await tools.ok('run', { command: `python3 ${join(dir, 'many-fds.py')} ${port}`, wait_seconds: 30 });
  // Its own process is not among the first fds read: the call is the most restricted caller's.
  assert.match(task.stdout_tail, /ERR_CALLER_UNKNOWN/, JSON.stringify(task));
  assert.match(
    task.stdout_tail,
    /is not among the processes outside the tasks nor in the first 8192 fd folders and links of tasks' processes/,
  );
});
