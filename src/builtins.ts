// Node's `fs` and `util`, required rather than imported, for all of src. An ESM import of one of
// Node's modules reads every export of it, and on Node 22 and later some of these two's are getters
// that load more of Node: `fs.promises` the promises API with readline and the REPL's history,
// `util`'s its MIME types, diffs, colours and more (31 and 33 of Node's modules on Node 24.22.3, none
// of which the daemon uses; imported rather than required, the two took 4.4 MB more of a bare Node
// 24's RSS, measured). A require() reads an export when the code uses it. Their types are imported
// as types only (`import type`), which loads nothing; lint holds src to that.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const fs = require('node:fs') as typeof import('node:fs');
const util = require('node:util') as typeof import('node:util');

export const {
  accessSync,
  chmodSync,
  closeSync,
  constants,
  existsSync,
  fchmodSync,
  fstatSync,
  ftruncateSync,
  linkSync,
  mkdirSync,
  open,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  readSync,
  realpathSync,
  renameSync,
  rmdirSync,
  rmSync,
  statfsSync,
  statSync,
  unlinkSync,
  watch,
  writeFileSync,
  writeSync,
} = fs;
export const { getSystemErrorMap, getSystemErrorName, parseArgs } = util;
