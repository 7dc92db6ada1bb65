// The WebAssembly newline counter against a plain count, byte by byte: random bytes of every
// length around its 16-byte steps and its 1 MiB windows, newlines dense and sparse.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { countNewlines } from '../../src/supervisor/output/newline-count.js';
import { params } from '../reliability/fuzz/runs.js';

function plainCount(bytes: Uint8Array): number {
  let count = 0;
  for (const byte of bytes) if (byte === 0x0a) count++;
  return count;
}

/** Bytes from a small alphabet, so that newlines come often: `\n`, `\r`, `a`, and 0x8a (a newline's bits and more). */
const denseBytes = fc
  .uint8Array({ maxLength: 300 })
  .map((raw) => raw.map((byte) => [0x0a, 0x0d, 0x61, 0x8a][byte & 3]!));

test('it counts what a byte-by-byte count does, at every length around its steps', () => {
  fc.assert(
    fc.property(denseBytes, fc.nat(40), (bytes, offset) => {
      // At an offset into a larger buffer, as the readers hand it stretches of their chunks.
      const backing = new Uint8Array(offset + bytes.length + 7).fill(0x0a);
      backing.set(bytes, offset);
      const stretch = backing.subarray(offset, offset + bytes.length);
      assert.equal(countNewlines(stretch), plainCount(stretch));
    }),
    params(2000),
  );
});

test('it counts across its 1 MiB windows', () => {
  const MIB = 1024 * 1024;
  for (const length of [MIB - 1, MIB, MIB + 1, MIB + 17, 3 * MIB + 5]) {
    const bytes = new Uint8Array(length);
    for (let index = 0; index < length; index += 1 + (index % 97)) bytes[index] = 0x0a;
    bytes[length - 1] = 0x0a;
    assert.equal(countNewlines(bytes), plainCount(bytes), `${length} bytes`);
  }
});
