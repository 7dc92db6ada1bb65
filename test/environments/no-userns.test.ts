// A daemon started as a normal user where no user namespace can be made (fixtures/no-userns.c: a
// seccomp profile that refuses one, as Ubuntu's kernel.apparmor_restrict_unprivileged_userns or a
// container's profile does) has neither the tasks' namespace nor a sandbox's: a sandboxed run is
// confined without namespaces (Landlock, and a seccomp filter that refuses every socket but a unix
// one), /healthz says so, and a warn line names what is missing and what gives the full sandbox.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { startIn } from '../helpers/environments.js';
import { connectClient } from '../helpers/mcp-client.js';
import { REPO_ROOT } from '../helpers/nix-module.js';
import { makeScratchDir } from '../helpers/scratch.js';

/** Each line "WHAT: ok" or "WHAT: ERRNO-NAME", from the system's Python (a normal user's PATH has no pyenv). */
const SOCKETS_PY = `
import errno, socket, sys
def attempt(what, make):
    try:
        make()
        print(what + ": ok")
    except OSError as error:
        print(what + ": " + errno.errorcode.get(error.errno, str(error.errno)))
def pair():
    a, b = socket.socketpair()
    a.send(b"x")
    assert b.recv(1) == b"x"
attempt("tcp to the daemon", lambda: socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5))
attempt("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
attempt("tcp6", lambda: socket.socket(socket.AF_INET6, socket.SOCK_STREAM))
attempt("netlink", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0))
attempt("unix", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))
attempt("socketpair", pair)
`;

test(
  'no user namespace: a sandbox without namespaces confines writes and cuts the network',
  { timeout: 120_000 },
  async (t) => {
    const work = makeScratchDir(t, 'no-userns');
    const wrapper = join(work, 'no-userns');
    execFileSync('cc', ['-O2', '-o', wrapper, join(REPO_ROOT, 'test/environments/fixtures/no-userns.c')]);
    // An enforced floor must be enforceable by the fallback, or the daemon would not start.
    const daemon = await startIn(t, 'user', ['--sandbox-floor', '{"network":false}'], [wrapper]);
    const health: any = await (await fetch(new URL('/healthz', daemon.url))).json();
    assert.equal(health.task_isolation.namespace.in_force, false, JSON.stringify(health.task_isolation));
    const { reason } = health.task_isolation.namespace;
    assert.ok(health.sandbox.in_force.includes(`(${reason})`), JSON.stringify(health.sandbox));
    assert.match(
      health.sandbox.in_force,
      /^landlock\+seccomp, no namespace: the tasks' namespace is not in force \(.*EPERM.*\) and the daemon holds no capability/,
      JSON.stringify(health.sandbox),
    );
    const said = daemon.stderr();
    assert.ok(said.includes('"level":40,') && said.includes('sandboxes here have no namespace ('), said);
    assert.ok(said.includes('kernel.apparmor_restrict_unprivileged_userns=0'), said);

    const tools = await connectClient(t, daemon.url);
    const outside = join(daemon.scratch, '..', `hive-outside-${daemon.marker}`);
    t.after(() => execFileSync('rm', ['-f', outside]));
    const command = [
      `touch ${daemon.scratch}/inside && echo inside`,
      `touch ${outside} 2>/dev/null && echo outside-written || echo outside-refused`,
      `/usr/bin/python3 -c '${SOCKETS_PY}' ${new URL(daemon.url).port}`,
    ].join('; ');
    const answer = await tools.call('run', {
      command,
      sandbox: { write: [daemon.scratch], network: false },
      wait_seconds: 30,
    });
    assert.equal(answer.structured.error ?? null, null, answer.text);
    assert.equal(
      answer.structured.stdout_tail,
      [
        'inside',
        'outside-refused',
        'tcp to the daemon: EACCES',
        'udp: EACCES',
        'tcp6: EACCES',
        'netlink: EACCES',
        'unix: ok',
        'socketpair: ok',
        '',
      ].join('\n'),
      answer.text,
    );
    // A terminal task keeps a terminal of the host's devpts (none of its own can be mounted).
    const terminal = await tools.ok('run', {
      command: 'tty; echo typed',
      pty: true,
      sandbox: { write: [daemon.scratch], network: false },
      wait_seconds: 30,
    });
    assert.match(terminal.stdout_tail, /^\/dev\/pts\/\d+\r?\ntyped\r?\n$/, JSON.stringify(terminal));
    const made = await tools.ok('run', { command: `test -e ${outside} && echo made || echo absent`, wait_seconds: 30 });
    assert.equal(made.stdout_tail, 'absent\n');
  },
);
