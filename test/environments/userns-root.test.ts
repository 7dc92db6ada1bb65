// The battery of ./battery.ts against a daemon started as root in a user namespace of its own (unshare --user --map-root-user).
import { test } from 'node:test';
import { startIn } from '../helpers/environments.js';
import { BATTERY_ARGS, runBattery } from './battery.js';

test('userns-root: the battery holds', { timeout: 240_000 }, async (t) => {
  await runBattery(t, await startIn(t, 'userns-root', BATTERY_ARGS));
});
