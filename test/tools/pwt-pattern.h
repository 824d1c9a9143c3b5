/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The data pattern of the torture tools. Every aligned 8-byte word of a file
 * holds a function of its own offset and the file's seed, so a verifier
 * catches a lost write (zeros or old data), a page written at the wrong
 * offset and a page of another file alike, and needs nothing but the seed.
 */
#ifndef PWT_PATTERN_H
#define PWT_PATTERN_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static inline uint64_t pwt_word(uint64_t seed, uint64_t off)
{
	/* Odd multipliers: distinct offsets and seeds never give one value. */
	return (off >> 3) * 0x9e3779b97f4a7c15ULL + seed * 0xbf58476d1ce4e5b9ULL + 1;
}

static inline unsigned char pwt_byte(uint64_t seed, uint64_t off)
{
	uint64_t w = pwt_word(seed, off & ~7ULL);

	/* Little-endian layout of the word, so byte and word views agree. */
	return (unsigned char)(w >> (8 * (off & 7)));
}

/* Fill @len bytes at @buf with the pattern of file offset @off. */
static inline void pwt_fill(unsigned char *buf, size_t len, uint64_t seed, uint64_t off)
{
	size_t i = 0;

	while (i < len && ((off + i) & 7))
		buf[i] = pwt_byte(seed, off + i), i++;
	for (; i + 8 <= len; i += 8) {
		uint64_t w = pwt_word(seed, off + i);

		memcpy(buf + i, &w, 8);
	}
	for (; i < len; i++)
		buf[i] = pwt_byte(seed, off + i);
}

/*
 * Offset in the file of the first byte of @buf (@len bytes at file offset
 * @off) that differs from the pattern, or -1 if none does. @scratch (@len
 * bytes) receives the expected data: memcmp() is what keeps verifying
 * hundreds of MB affordable under an emulated CPU.
 */
static inline long long pwt_check(const unsigned char *buf, unsigned char *scratch,
				  size_t len, uint64_t seed, uint64_t off)
{
	size_t i;

	pwt_fill(scratch, len, seed, off);
	if (!memcmp(buf, scratch, len))
		return -1;
	for (i = 0; buf[i] == scratch[i]; i++)
		;
	return (long long)(off + i);
}

static inline double pwt_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#endif /* PWT_PATTERN_H */
