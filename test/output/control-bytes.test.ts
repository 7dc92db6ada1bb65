// Output of control characters: JSON writes most of them as six bytes (\u0001), in the text and
// again in the structured result, so max_bytes counts each as six. Before, a MiB of \x01 with
// max_bytes 1 MiB made 12.6 MB answers; 200 at once took the daemon to 5.3 GB, and the bound on
// answers not yet taken closed all but 2 of their connections (50 at once: 1.5 GB, 48 closed).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { processFigures, report } from '../helpers/battery.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { modernRequest } from '../helpers/modern-client.js';

/** What `text` takes in a JSON string, in bytes, but a newline as one (as max_bytes counts it). */
const jsonBytes = (text: string) => Buffer.byteLength(JSON.stringify(text)) - 2 - (text.split('\n').length - 1);

test('max_bytes counts a control character as the six bytes JSON writes it in, and what is left out in bytes of the file', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const command = String.raw`head -c 65536 /dev/zero | tr '\0' '\1'; printf '\nend\n'`;
  await tools.ok('run', { command, name: 'ctl', wait_seconds: 30 });

  const { stdout } = await tools.ok('output', { id: 'ctl', max_bytes: 16384 });
  const shown = stdout.text.replace(/\[\.\.\. .* left out \.\.\.\]\n/, '');
  const controls = shown.split('\x01').length - 1;
  assert.equal(shown, `${'\x01'.repeat(controls)}\nend\n`, 'the first line cut to its start, then the last');
  assert.ok(jsonBytes(shown) <= 16384, `${jsonBytes(shown)} bytes of JSON shown for max_bytes 16384`);
  // Half of max_bytes goes to each end: the front is the cut line, about 8192 / 6 characters.
  assert.ok(controls > 1300, `${controls} characters of the long line shown`);
  assert.equal(stdout.omitted_bytes, 65536 - controls, 'left out: the bytes of the file not shown');

  // The end of a line of two-byte characters and control characters: whole characters, within max_bytes.
  const mixed = String.raw`echo start; for i in $(seq 5000); do printf '\303\251\001'; done; echo`;
  await tools.ok('run', { command: mixed, name: 'mixed', wait_seconds: 30 });
  const answer = (await tools.ok('output', { id: 'mixed', max_bytes: 1000 })).stdout.text as string;
  const [front, end] = answer.split(/\[\.\.\. .* left out \.\.\.\]\n/);
  assert.equal(front, 'start\n');
  const line = end!.slice(0, -1);
  assert.ok(!line.includes('\uFFFD'), 'no character cut in two');
  assert.ok('é\x01'.repeat(5000).endsWith(line), `the end of the line: ${JSON.stringify(line.slice(0, 20))}`);
  // What the front left of max_bytes, the newline after the line among it.
  assert.ok(jsonBytes(line) < 994 && jsonBytes(line) > 900, `${jsonBytes(line)} bytes of JSON for 994`);
  report(t, { front_controls: controls, tail_json_bytes: jsonBytes(line) });
});

const CALLS = 50;

test(`${CALLS} outputs at once of a MiB of \\x01 with max_bytes 1 MiB are each answered in about 1 MiB`, async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  await tools.ok('run', {
    command: String.raw`head -c 1048576 /dev/zero | tr '\0' '\1'`,
    name: 'amp',
    wait_seconds: 30,
  });
  const ask = () =>
    modernRequest(daemon.url, 'tools/call', {
      name: 'output',
      arguments: { id: 'amp', stream: 'stdout', max_bytes: 1024 * 1024 },
    });
  await ask(); // the reader threads started, the file in the page cache
  const before = processFigures(daemon.child.pid!).rssKb;
  let peak = before;
  const sampling = setInterval(() => (peak = Math.max(peak, processFigures(daemon.child.pid!).rssKb)), 10);
  t.after(() => clearInterval(sampling));
  const answers = await Promise.allSettled(Array.from({ length: CALLS }, ask));
  clearInterval(sampling);
  const grownMb = Math.round((peak - before) / 1024);
  const sizes = answers.map((answer) =>
    answer.status === 'fulfilled' ? Buffer.byteLength(JSON.stringify(answer.value.body)) : -1,
  );
  report(t, { calls: CALLS, answer_bytes: Math.max(...sizes), grown_mb: grownMb });
  const lost = answers.filter((answer) => answer.status === 'rejected' || answer.value.status !== 200);
  assert.equal(lost.length, 0, `${lost.length} of ${CALLS} calls got no answer`);
  for (const size of sizes) assert.ok(size <= 2.2 * 1024 * 1024, `an answer of ${size} bytes for max_bytes 1 MiB`);
  // By hand, 50 at once: 1.5 GB at the peak before, 191 MB in all for 200 after.
  assert.ok(grownMb < 250, `${CALLS} answers took the daemon ${grownMb} MB further`);
});
