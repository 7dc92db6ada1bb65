// The battery of ./battery.ts against a daemon started as root on the host.
import { test } from 'node:test';
import { startIn } from '../helpers/environments.js';
import { BATTERY_ARGS, runBattery } from './battery.js';

test('host-root: the battery holds', { timeout: 240_000 }, async (t) => {
  await runBattery(t, await startIn(t, 'host-root', BATTERY_ARGS));
});
