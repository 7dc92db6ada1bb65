/* SHA-256 (sha256.h), as FIPS 180-4 states it. */
#include "sha256.h"

#include <string.h>

static const uint32_t ROUND_CONSTANTS[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t rotate(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void compress(uint32_t state[8], const unsigned char block[64]) {
  uint32_t w[64];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)block[i * 4] << 24 | (uint32_t)block[i * 4 + 1] << 16 | (uint32_t)block[i * 4 + 2] << 8 | block[i * 4 + 3];
  for (int i = 16; i < 64; i++) {
    uint32_t s0 = rotate(w[i - 15], 7) ^ rotate(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = rotate(w[i - 2], 17) ^ rotate(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = state[0], b = state[1], c = state[2], d = state[3], e = state[4], f = state[5], g = state[6], h = state[7];
  for (int i = 0; i < 64; i++) {
    uint32_t t1 = h + (rotate(e, 6) ^ rotate(e, 11) ^ rotate(e, 25)) + ((e & f) ^ (~e & g)) + ROUND_CONSTANTS[i] + w[i];
    uint32_t t2 = (rotate(a, 2) ^ rotate(a, 13) ^ rotate(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  state[0] += a, state[1] += b, state[2] += c, state[3] += d, state[4] += e, state[5] += f, state[6] += g, state[7] += h;
}

void sha256_start(struct sha256 *hash) {
  static const uint32_t initial[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  memcpy(hash->state, initial, sizeof initial);
  hash->length = 0;
  hash->used = 0;
}

void sha256_add(struct sha256 *hash, const void *data, size_t length) {
  const unsigned char *bytes = data;
  hash->length += length;
  while (length > 0) {
    size_t take = 64 - hash->used < length ? 64 - hash->used : length;
    memcpy(hash->block + hash->used, bytes, take);
    hash->used += take;
    bytes += take;
    length -= take;
    if (hash->used == 64) {
      compress(hash->state, hash->block);
      hash->used = 0;
    }
  }
}

void sha256_finish(struct sha256 *hash, unsigned char digest[SHA256_BYTES]) {
  uint64_t bits = hash->length * 8;
  static const unsigned char pad[64] = {0x80};
  sha256_add(hash, pad, hash->used < 56 ? 56 - hash->used : 120 - hash->used);
  unsigned char tail[8];
  for (int i = 0; i < 8; i++) tail[i] = (unsigned char)(bits >> (56 - 8 * i));
  sha256_add(hash, tail, 8);
  for (int i = 0; i < 8; i++) {
    digest[i * 4] = (unsigned char)(hash->state[i] >> 24);
    digest[i * 4 + 1] = (unsigned char)(hash->state[i] >> 16);
    digest[i * 4 + 2] = (unsigned char)(hash->state[i] >> 8);
    digest[i * 4 + 3] = (unsigned char)hash->state[i];
  }
}
