/* SHA-256 (FIPS 180-4), for telling a copy of a ruled program by its contents. */
#ifndef HIVE_SHA256_H
#define HIVE_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_BYTES 32

struct sha256 {
  uint32_t state[8];
  uint64_t length;
  unsigned char block[64];
  size_t used;
};

void sha256_start(struct sha256 *hash);
void sha256_add(struct sha256 *hash, const void *data, size_t length);
void sha256_finish(struct sha256 *hash, unsigned char digest[SHA256_BYTES]);

#endif
