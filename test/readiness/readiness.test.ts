// Readiness against the real daemon: waits on a line of output, on a listening port, on several
// tasks at once; the ports each task listens on; exclusive_port; and every bad input.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { connectClient, type ToolClient } from '../helpers/mcp-client.js';
import { waitFor } from '../helpers/processes.js';

/** A TCP port free right now (the kernel picks it; nothing holds it after). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const httpServer = (port: number) => `python3 -m http.server ${port} --bind 127.0.0.1`;

test('readiness, against one daemon', async (t) => {
  const daemon: TestDaemon = await startTestDaemon(t);
  const tools: ToolClient = await connectClient(t, daemon.url);
  const other: ToolClient = await connectClient(t, daemon.url);
  let gates = 0;
  /** A file path the test creates to let a task go on (a task waits for it with `until GATE`). */
  const gate = () => join(daemon.scratch, `gate-${++gates}`);
  const until = (path: string) => `while [ ! -e ${path} ]; do sleep 0.02; done`;

  await t.test('run returns as soon as a ready line is printed, while the server goes on', async () => {
    const go = gate();
    const running = tools.ok('run', {
      command: `echo starting; ${until(go)}; echo "  listening on :8080  "; sleep 300`,
      name: 'dev',
      wait_for: 'ready|listening on',
      wait_seconds: 30,
    });
    assert.ok(
      await waitFor(async () => (await other.ok('status', { id: 'dev' })).stdout_tail === 'starting\n'),
      'the server started',
    );
    writeFileSync(go, '');
    const task = await running;
    assert.deepEqual(
      [task.wait_result, task.matched_line, task.state],
      ['matched', '  listening on :8080  ', 'running'],
    );
    await tools.ok('kill', { id: 'dev', force: true });
  });

  await t.test("a match on a task's first line answers with its pid: the start is known before it", async () => {
    // The shim writes the line to the file itself; its report of the start travels another way.
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        tools.ok('run', { command: 'echo up; sleep 300', name: `first-${i}`, wait_for: '^up$', wait_seconds: 30 }),
      ),
    );
    for (const answer of answers) {
      assert.deepEqual([answer.wait_result, answer.state], ['matched', 'running']);
      assert.equal(typeof answer.pid, 'number', `${answer.id} has its pid`);
    }
    await Promise.all(answers.map((answer) => tools.ok('kill', { id: answer.id, force: true })));
  });

  await t.test('a line printed before the call matches at once, and a match may span two writes', async () => {
    const go = gate();
    await tools.ok('run', {
      command: `echo ready; printf 'half a li'; ${until(go)}; printf 'ne\\nrest\\n'; sleep 300`,
      name: 'early',
      wait_seconds: 0,
    });
    assert.ok(
      await waitFor(async () => (await tools.ok('status', { id: 'early' })).stdout_tail === 'ready\nhalf a li'),
      'both writes before the gate are out',
    );
    const early = await tools.ok('status', { id: 'early', wait_for: '^ready$', wait_seconds: 30 });
    assert.deepEqual([early.wait_result, early.matched_line], ['matched', 'ready']);
    const joined = tools.ok('status', { id: 'early', wait_for: 'a line$', wait_seconds: 30 });
    writeFileSync(go, '');
    assert.deepEqual([(await joined).wait_result, (await joined).matched_line], ['matched', 'half a line']);
    await tools.ok('kill', { id: 'early', force: true });
  });

  await t.test('a wait ends with the task, or with wait_seconds', async () => {
    const ended = await tools.ok('run', {
      command: 'echo nothing to see; exit 3',
      wait_for: 'never printed',
      wait_seconds: 30,
    });
    assert.deepEqual([ended.wait_result, ended.matched_line, ended.state, ended.exit_code], ['ended', null, 'done', 3]);
    await tools.ok('run', { command: 'sleep 300', name: 'quiet', wait_seconds: 0 });
    const timedOut = await tools.ok('status', { id: 'quiet', wait_for: 'x', wait_seconds: 0.3 });
    assert.deepEqual([timedOut.wait_result, timedOut.state], ['timeout', 'running']);
    await tools.ok('kill', { id: 'quiet', force: true });
  });

  await t.test(
    'a pathological expression does not stall the daemon: other calls are answered meanwhile',
    async (sub) => {
      await tools.ok('run', {
        command: `printf 'a%.0s' $(seq 30000); echo b; sleep 300`,
        name: 'aaa',
        wait_seconds: 0,
      });
      assert.ok(
        await waitFor(async () => (await tools.ok('status', { id: 'aaa', tail_bytes: 2 })).stdout_tail === 'b\n'),
        'the long line is written',
      );
      let waitReturned = false;
      const wait = tools
        .ok('status', { id: 'aaa', wait_for: '(a+)+$', wait_seconds: 2 })
        .then((view) => ((waitReturned = true), view));
      const started = Date.now();
      const answer = await other.ok('list', { limit: 1 });
      sub.diagnostic(`another call answered in ${Date.now() - started} ms while the wait ran`);
      assert.equal(answer.tasks.length, 1);
      assert.equal(waitReturned, false, 'the other call was answered before the wait was over');
      assert.equal(
        (await wait).wait_result,
        'timeout',
        'no line of a’s ends the line: it does not match, and matching it took no time to speak of',
      );
      await tools.ok('kill', { id: 'aaa', force: true });
    },
  );

  await t.test('wait_for_port returns once a real server listens, and status lists its ports', async () => {
    const port = await freePort();
    const task = await tools.ok('run', {
      command: httpServer(port),
      name: 'http',
      wait_for_port: port,
      wait_seconds: 30,
    });
    assert.deepEqual([task.wait_result, task.state], ['listening', 'running']);
    assert.deepEqual(
      task.ports.map(({ protocol, address, port: listened }: any) => [protocol, address, listened]),
      [['tcp', '127.0.0.1', port]],
    );
    assert.ok(Number.isInteger(task.ports[0].pid) && task.ports[0].pid > 0);
    const listed = (await tools.ok('list', { state: 'running', ports: true })).tasks.find(
      (row: any) => row.id === 'http',
    );
    assert.deepEqual(
      listed.ports.map((entry: any) => entry.port),
      [port],
    );
    assert.equal(
      (await tools.ok('list', { state: 'running' })).tasks.find((row: any) => row.id === 'http').ports,
      undefined,
      'ports only when asked',
    );
    await tools.ok('kill', { id: 'http', force: true });
  });

  await t.test('ports lists both listeners of a task with two, and none of a task with none', async () => {
    const [first, second] = [await freePort(), await freePort()];
    const task = await tools.ok('run', {
      command: `${httpServer(first)} & ${httpServer(second)} & wait`,
      name: 'two',
      wait_for_port: second,
      wait_seconds: 30,
    });
    assert.equal(task.wait_result, 'listening');
    const both = await tools.statusWhen('two', (view) => view.ports.length === 2, 'both servers listen', 10_000);
    assert.deepEqual(
      both.ports.map((entry: any) => entry.port),
      [first, second].sort((a, b) => a - b),
    );
    assert.notEqual(both.ports[0].pid, both.ports[1].pid, 'each held by its own process');
    const none = await tools.ok('run', { command: 'sleep 300', name: 'none', wait_seconds: 0 });
    assert.deepEqual((await tools.ok('status', { id: none.id })).ports, []);
    for (const id of ['two', 'none']) await tools.ok('kill', { id, force: true });
  });

  await t.test(
    'exclusive_port refuses a second server on a busy port, naming the task or the process that holds it',
    async () => {
      const port = await freePort();
      await tools.ok('run', { command: httpServer(port), name: 'first', wait_for_port: port, wait_seconds: 30 });
      const refused = await tools.call('run', { command: httpServer(port), name: 'second', exclusive_port: port });
      assert.equal(refused.isError, true);
      assert.match(
        refused.text,
        new RegExp(
          `^"exclusive_port" ${port} is taken: task "first" \\(pid \\d+, 127\\.0\\.0\\.1:${port}\\) already listens on it; nothing was started`,
        ),
      );
      assert.equal(refused.structured.error.code, 'ERR_PORT_BUSY');
      assert.equal(
        (await tools.call('status', { id: 'second' })).structured.error.code,
        'ERR_UNKNOWN_TASK',
        'nothing was started',
      );
      await tools.ok('kill', { id: 'first', force: true });

      const outside: Server = createServer();
      await new Promise<void>((resolve) => outside.listen(0, '127.0.0.1', resolve));
      const outsidePort = (outside.address() as AddressInfo).port;
      try {
        const byOutsider = await tools.error('run', { command: 'true', exclusive_port: outsidePort });
        assert.equal(
          byOutsider,
          `"exclusive_port" ${outsidePort} is taken: pid ${process.pid} (node, 127.0.0.1:${outsidePort}), outside this daemon already listens on it; nothing was started: kill that first, or choose another port`,
        );
      } finally {
        outside.close();
      }
      const free = await tools.ok('run', { command: 'echo free', exclusive_port: await freePort() });
      assert.equal(free.stdout_tail, 'free\n');
    },
  );

  await t.test('status of several ids returns when any one ends, or all of them', async () => {
    const [goA, goB] = [gate(), gate()];
    await tools.ok('run', { command: `${until(goA)}; exit 1`, name: 'build', wait_seconds: 0 });
    await tools.ok('run', { command: `${until(goB)}`, name: 'tests', wait_seconds: 0 });
    const timeout = await tools.ok('status', { ids: ['build', 'tests'], wait_seconds: 0.2 });
    assert.deepEqual(
      [timeout.wait_result, timeout.ended_ids, timeout.tasks.map((view: any) => view.id)],
      ['timeout', [], ['build', 'tests']],
    );
    const any = tools.ok('status', { ids: ['build', 'tests'], wait: 'any', wait_seconds: 30 });
    writeFileSync(goA, '');
    const first = await any;
    assert.deepEqual(
      [first.wait_result, first.ended_ids, first.tasks[0].exit_code, first.tasks[1].state],
      ['ended', ['build'], 1, 'running'],
    );
    const all = tools.ok('status', { ids: ['build', 'tests'], wait_seconds: 30 });
    writeFileSync(goB, '');
    const both = await all;
    assert.deepEqual(
      [both.wait_result, both.ended_ids, both.tasks.map((view: any) => view.state)],
      ['ended', ['build', 'tests'], ['done', 'done']],
    );
  });

  await t.test('every bad readiness field is refused naming the field', async () => {
    const cases: Array<[string, Record<string, unknown>, string]> = [
      [
        'run',
        { command: 'true', wait_for: '' },
        'Invalid run input: "wait_for" must be a regular expression of 1 to 1024 characters that runs in linear time (no backreferences or lookaround); got "" (string)',
      ],
      [
        'run',
        { command: 'true', wait_for: '(a)\\1' },
        'Invalid run input: "wait_for" must be a regular expression that runs in linear time (no backreferences or lookaround); got "(a)\\\\1" (string): /(a)\\1/l: Cannot be executed in linear time',
      ],
      [
        'status',
        { id: 'x', wait_for: '(' },
        'Invalid status input: "wait_for" must be a regular expression that runs in linear time (no backreferences or lookaround); got "(" (string): /(/l: Unterminated group',
      ],
      [
        'run',
        { command: 'true', wait_for_port: 0 },
        'Invalid run input: "wait_for_port" must be a TCP port from 1 to 65535; got 0 (number)',
      ],
      [
        'status',
        { id: 'x', wait_for_port: 70000 },
        'Invalid status input: "wait_for_port" must be a TCP port from 1 to 65535; got 70000 (number)',
      ],
      [
        'run',
        { command: 'true', exclusive_port: 'http' },
        'Invalid run input: "exclusive_port" must be a TCP port from 1 to 65535; got "http" (string)',
      ],
      [
        'status',
        { ids: [] },
        'Invalid status input: "ids" must be an array of 1 to 100 task ids (each 1 to 64 characters of letters, digits, ".", "_" and "-", starting with a letter or digit); got [] (array)',
      ],
      [
        'status',
        { ids: Array.from({ length: 101 }, (_, i) => `t${i}`) },
        `Invalid status input: "ids" must be an array of 1 to 100 task ids (each 1 to 64 characters of letters, digits, ".", "_" and "-", starting with a letter or digit); got ${JSON.stringify(Array.from({ length: 101 }, (_, i) => `t${i}`)).slice(0, 80)}... (array)`,
      ],
      [
        'status',
        { ids: ['../x'] },
        'Invalid status input: "ids" must be an array of 1 to 100 task ids (each 1 to 64 characters of letters, digits, ".", "_" and "-", starting with a letter or digit); got ["../x"] (array)',
      ],
      ['status', { ids: ['nope'] }, '"id" names no task: got "nope"; call list to see the ids of known tasks'],
      [
        'status',
        { ids: ['dev'], wait: 'some' },
        'Invalid status input: "wait" must be one of any, all; got "some" (string)',
      ],
      [
        'status',
        { ids: ['dev'], id: 'dev' },
        'Invalid status input: "ids" is taken alone: without id, wait_for or wait_for_port; got ids with "dev" (string)',
      ],
      ['status', {}, 'Invalid status input: "id" is required (a task id), or "ids" for several tasks at once'],
      ['list', { ports: 'yes' }, 'Invalid list input: "ports" must be true or false; got "yes" (string)'],
    ];
    for (const [tool, args, message] of cases)
      assert.equal(await tools.error(tool, args), message, `${tool} ${JSON.stringify(args).slice(0, 80)}`);
  });
});
