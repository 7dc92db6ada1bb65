// The checking of tool arguments, as a unit: each refusal names the field, echoes the value and says
// what is accepted, whatever the value's shape or depth.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ToolInputError } from '../../src/errors.js';
import { echoValue } from '../../src/shared/echo.js';
import { parseToolInput } from '../../src/supervisor/mcp/tool.js';
import { killTool } from '../../src/supervisor/mcp/tools/kill.js';
import { runTool } from '../../src/supervisor/mcp/tools/run.js';

function refusal(run: () => unknown): ToolInputError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof ToolInputError, `not a ToolInputError: ${String(error)}`);
    return error;
  }
  assert.fail('the input was accepted');
}

test('a valid input comes back with its defaults filled in', () => {
  assert.deepEqual(parseToolInput(killTool, { id: 'build' }), { id: 'build', force: false });
  assert.equal(parseToolInput(runTool, { command: 'true' }).wait_seconds, 3);
});

test('each bad field is named with its value and what it accepts, under one code', () => {
  const error = refusal(() => parseToolInput(killTool, { id: 'a b', signal: 'SIGSTOP' }));
  assert.equal(error.code, 'ERR_INVALID_INPUT');
  assert.equal(
    error.message,
    'Invalid kill input: "id" must be a task id: 1 to 64 characters of letters, digits, ".", "_" and "-", starting with a letter or digit; got "a b" (string); "signal" must be one of SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGKILL; got "SIGSTOP" (string)',
  );
});

test('arguments that are not an object are refused as such', () => {
  assert.equal(
    refusal(() => parseToolInput(killTool, [1, 2])).message,
    'Invalid kill input: the arguments must be an object of named fields; got [1,2] (array)',
  );
});

test('a value nested thousands deep is echoed shallowly, arrays as objects', () => {
  let arrays: unknown = 'x';
  let objects: unknown = 'x';
  for (let depth = 0; depth < 20_000; depth++) {
    arrays = [arrays];
    objects = { a: objects };
  }
  assert.equal(echoValue(arrays), '[[[[[...]]]]] (array)');
  assert.equal(echoValue(objects), '{"a":{"a":{"a":{"a":{...}}}}} (object)');
  assert.match(
    refusal(() => parseToolInput(runTool, { command: 'true', env: arrays })).message,
    /^Invalid run input: "env" must be an object of at most 4096 variables/,
  );
});

test('long values are cut, with their length', () => {
  assert.equal(echoValue('y'.repeat(100)), `"${'y'.repeat(60)}"... (string of 100 characters)`);
  assert.equal(echoValue(undefined), 'nothing');
  assert.equal(echoValue(null), 'null (null)');
});
