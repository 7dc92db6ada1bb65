// The battery of ./battery.ts against a daemon started by a shell in a default Podman container.
import { test } from 'node:test';
import { podmanMissing, startIn } from '../helpers/environments.js';
import { BATTERY_ARGS, runBattery } from './battery.js';

test('podman-shell: the battery holds', { timeout: 240_000, skip: podmanMissing() ?? false }, async (t) => {
  await runBattery(t, await startIn(t, 'podman-shell', BATTERY_ARGS));
});
