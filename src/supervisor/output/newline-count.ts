// Counts the newlines in a stretch of output: what line numbers cost. A tiny WebAssembly function
// with 128-bit SIMD does it, because line numbers need every newline before a line counted.
//
// Performance: Buffer#indexOf in a loop counts about 1 GB/s here (a native call per line), a JS
// byte loop 0.3 GB/s, 32-bit SWAR in JS 0.9 GB/s; this function compares 16 bytes a step and
// counts several GB/s, so grep over a 1 GiB log is bound by reading the file, as grep -n is. What
// it buys (bench/README.md, "What each trick buys"): a grep for a word over 100 MiB at 0.86x and
// 0.88x of grep -n's speed, against 0.50x and 0.54x with a Uint8Array#indexOf loop (2026-12-08);
// test/output/newline-count.test.ts holds it to a byte-by-byte count.
// The module is assembled below from its text form:
//
//   (func (export "count") (param $at i32) (param $length i32) (result i32)
//     (local $end i32) (local $count i32)
//     (local.set $end (i32.add (local.get $at) (local.get $length)))
//     (block (loop
//       (br_if 1 (i32.ge_u (local.get $at) (local.get $end)))
//       (local.set $count (i32.add (local.get $count)
//         (i32.popcnt (i8x16.bitmask (i8x16.eq (v128.load (local.get $at)) (i8x16.splat (i32.const 10)))))))
//       (local.set $at (i32.add (local.get $at) (i32.const 16)))
//       (br 0)))
//     (local.get $count))
//
// with its memory imported as env.memory. It counts whole 16-byte steps; the rest is counted here.

// Node has WebAssembly; the DOM typings that declare it are not in this project's libraries.
declare const WebAssembly: {
  Memory: new (descriptor: { initial: number }) => { buffer: ArrayBuffer };
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
};

/** Bytes counted per call: the function's memory, which each stretch is copied into. */
const WINDOW_BYTES = 1024 * 1024;
const PAGE_BYTES = 65_536;

const BODY = [
  0x01,
  0x02,
  0x7f, // two i32 locals: $end (2), $count (3)
  0x20,
  0x00,
  0x20,
  0x01,
  0x6a,
  0x21,
  0x02, // end = at + length
  0x02,
  0x40,
  0x03,
  0x40, // block, loop
  0x20,
  0x00,
  0x20,
  0x02,
  0x4f,
  0x0d,
  0x01, // br_if 1 (at >= end)
  0x20,
  0x03, // count
  0x20,
  0x00,
  0xfd,
  0x00,
  0x00,
  0x00, // v128.load at
  0x41,
  0x0a,
  0xfd,
  0x0f, // i8x16.splat 10
  0xfd,
  0x23,
  0xfd,
  0x64,
  0x69, // i8x16.eq, i8x16.bitmask, i32.popcnt
  0x6a,
  0x21,
  0x03, // count += ...
  0x20,
  0x00,
  0x41,
  0x10,
  0x6a,
  0x21,
  0x00, // at += 16
  0x0c,
  0x00,
  0x0b,
  0x0b, // br 0, end loop, end block
  0x20,
  0x03,
  0x0b, // count
];
const section = (id: number, bytes: number[]) => [id, bytes.length, ...bytes];
const name = (text: string) => [text.length, ...Buffer.from(text)];
const MODULE = new Uint8Array([
  0x00,
  0x61,
  0x73,
  0x6d,
  0x01,
  0x00,
  0x00,
  0x00,
  ...section(1, [0x01, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f]), // type: (i32, i32) -> i32
  ...section(2, [0x01, ...name('env'), ...name('memory'), 0x02, 0x00, WINDOW_BYTES / PAGE_BYTES]), // import memory
  ...section(3, [0x01, 0x00]),
  ...section(7, [0x01, ...name('count'), 0x00, 0x00]),
  ...section(10, [0x01, BODY.length, ...BODY]),
]);

const memory = new WebAssembly.Memory({ initial: WINDOW_BYTES / PAGE_BYTES });
const window = new Uint8Array(memory.buffer);
const countWindow = new WebAssembly.Instance(new WebAssembly.Module(MODULE), { env: { memory } }).exports.count as (
  at: number,
  length: number,
) => number;

/** The number of "\n" bytes in `bytes`. */
export function countNewlines(bytes: Uint8Array): number {
  let count = 0;
  for (let start = 0; start < bytes.length; start += WINDOW_BYTES) {
    const length = Math.min(WINDOW_BYTES, bytes.length - start);
    window.set(bytes.subarray(start, start + length));
    const whole = length & ~15;
    count += countWindow(0, whole);
    for (let index = whole; index < length; index++) if (window[index] === 0x0a) count++;
  }
  return count;
}
