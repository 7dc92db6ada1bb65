// Scratch directories for a test, removed when it ends (even when it fails); an immutable flag a
// test's task may have set on something inside is cleared first, so the removal cannot fail on it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';

/** A new directory under the temporary directory, named `hive-bash-PREFIX-...`, removed after `t`. */
export function makeScratchDir(t: TestContext, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `hive-bash-${prefix}-`));
  t.after(() => {
    spawnSync('chattr', ['-R', '-i', '-a', dir], { stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}
