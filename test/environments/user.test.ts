// The battery of ./battery.ts against a daemon started as a normal user made for the test.
import { test } from 'node:test';
import { startIn } from '../helpers/environments.js';
import { BATTERY_ARGS, runBattery } from './battery.js';

test('user: the battery holds', { timeout: 240_000 }, async (t) => {
  await runBattery(t, await startIn(t, 'user', BATTERY_ARGS));
});
