// The battery of ./battery.ts against a daemon started as PID 1 of a Podman container given CAP_SYS_ADMIN.
import { test } from 'node:test';
import { podmanMissing, startIn } from '../helpers/environments.js';
import { BATTERY_ARGS, runBattery } from './battery.js';

test('podman-sys-admin: the battery holds', { timeout: 240_000, skip: podmanMissing() ?? false }, async (t) => {
  await runBattery(t, await startIn(t, 'podman-sys-admin', BATTERY_ARGS));
});
