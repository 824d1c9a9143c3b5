// SPDX-License-Identifier: GPL-2.0
/*
 * pwt-fsx: random pwrite, truncate, mmap-store, read and fsync operations
 * on one file against an in-memory model of what it must contain, in the
 * spirit of fsx. Static, for the guest torture tests: pwthrottle forces
 * writeback of the very file this is truncating and remapping.
 *
 *   pwt-fsx FILE [-n OPS] [-m MAXSIZE_KB] [-l MAXLEN_KB] [-s SEED]
 *     OPS operations (default 3000) on a file of at most MAXSIZE_KB
 *     (default 8192), each at most MAXLEN_KB long (default 256). Every read
 *     is checked, and the whole file every 500 operations and at the end.
 *
 * Prints "ops=N secs=S max_op_ms=M"; the slowest operation tells a stall
 * apart from a slow run. A mismatch prints the offset and the last
 * operations, and exits 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pwt-pattern.h"

#define HISTORY 16

static uint64_t rng;
static unsigned char *model, *buf;
static size_t fsize, maxsize, maxlen;
static const char *path;
static int fd;
static char history[HISTORY][80];
static long opno;

static uint64_t rnd(void)
{
	/* xorshift64: reproducible from -s, no libc state. */
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(history[opno % HISTORY], sizeof(history[0]), fmt, ap);
	va_end(ap);
}

static void fail(const char *what)
{
	long i;

	fprintf(stderr, "pwt-fsx: %s: op %ld: %s (%s)\n", path, opno, what, strerror(errno));
	for (i = opno - HISTORY + 1; i <= opno; i++)
		if (i >= 0)
			fprintf(stderr, "pwt-fsx:   op %ld: %s\n", i, history[i % HISTORY]);
	exit(1);
}

static void random_data(unsigned char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i += 8) {
		uint64_t v = rnd();

		memcpy(p + i, &v, len - i < 8 ? len - i : 8);
	}
}

/* Bytes past the end are zero in the model, as a file reads after growth. */
static void set_size(size_t size)
{
	if (size < fsize)
		memset(model + size, 0, fsize - size);
	fsize = size;
}

static void check_range(size_t off, size_t len)
{
	ssize_t n = pread(fd, buf, len, off);
	size_t i;

	if (n != (ssize_t)len)
		fail("short read");
	if (!memcmp(buf, model + off, len))
		return;
	for (i = 0; buf[i] == model[off + i]; i++)
		;
	fprintf(stderr, "pwt-fsx: offset %zu: 0x%02x, want 0x%02x\n", off + i, buf[i],
		model[off + i]);
	fail("wrong data");
}

static void check_all(void)
{
	struct stat st;
	size_t off;

	if (fstat(fd, &st) || (size_t)st.st_size != fsize) {
		fprintf(stderr, "pwt-fsx: size %lld, want %zu\n", (long long)st.st_size, fsize);
		fail("wrong size");
	}
	for (off = 0; off < fsize; off += maxlen)
		check_range(off, fsize - off < maxlen ? fsize - off : maxlen);
}

static void op_write(void)
{
	size_t off = rnd() % maxsize, len = 1 + rnd() % maxlen;

	if (off + len > maxsize)
		len = maxsize - off;
	note("pwrite off %zu len %zu", off, len);
	random_data(model + off, len);
	if (pwrite(fd, model + off, len, off) != (ssize_t)len)
		fail("pwrite");
	if (off + len > fsize)
		fsize = off + len;
}

static void op_mapwrite(void)
{
	size_t off = rnd() % maxsize, len = 1 + rnd() % maxlen, start;
	unsigned char *p;

	if (off + len > maxsize)
		len = maxsize - off;
	note("mapwrite off %zu len %zu", off, len);
	if (off + len > fsize) {
		if (ftruncate(fd, off + len))
			fail("ftruncate (grow for mmap)");
		fsize = off + len;
	}
	start = off & ~(size_t)4095;
	p = mmap(NULL, off + len - start, PROT_READ | PROT_WRITE, MAP_SHARED, fd, start);
	if (p == MAP_FAILED)
		fail("mmap");
	random_data(model + off, len);
	memcpy(p + (off - start), model + off, len);
	if ((rnd() & 3) == 0 && msync(p, off + len - start, MS_SYNC))
		fail("msync");
	if (munmap(p, off + len - start))
		fail("munmap");
}

static void op_truncate(void)
{
	size_t size = rnd() % maxsize;

	note("truncate to %zu (from %zu)", size, fsize);
	if (ftruncate(fd, size))
		fail("ftruncate");
	set_size(size);
}

static void op_read(void)
{
	size_t off, len;

	if (!fsize)
		return;
	off = rnd() % fsize;
	len = 1 + rnd() % maxlen;
	if (off + len > fsize)
		len = fsize - off;
	note("read off %zu len %zu", off, len);
	check_range(off, len);
}

int main(int argc, char **argv)
{
	long ops = 3000, max_kb = 8192, len_kb = 256, seed = 1;
	double t0, t, worst = 0;
	int opt;

	while ((opt = getopt(argc, argv, "n:m:l:s:")) != -1) {
		switch (opt) {
		case 'n':
			ops = atol(optarg);
			break;
		case 'm':
			max_kb = atol(optarg);
			break;
		case 'l':
			len_kb = atol(optarg);
			break;
		case 's':
			seed = atol(optarg);
			break;
		default:
			goto usage;
		}
	}
	if (argc - optind != 1 || max_kb <= 0 || len_kb <= 0)
		goto usage;
	path = argv[optind];
	maxsize = (size_t)max_kb << 10;
	maxlen = (size_t)len_kb << 10;
	rng = 0x2545f4914f6cdd1dULL ^ (uint64_t)seed;
	model = calloc(1, maxsize);
	buf = malloc(maxlen);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (!model || !buf || fd < 0)
		fail("setup");

	t0 = pwt_now();
	for (opno = 0; opno < ops; opno++) {
		unsigned int r = rnd() % 100;

		t = pwt_now();
		if (r < 40) {
			op_write();
		} else if (r < 55) {
			op_mapwrite();
		} else if (r < 65) {
			op_truncate();
		} else if (r < 95) {
			op_read();
		} else {
			note("fsync (size %zu)", fsize);
			if (fsync(fd))
				fail("fsync");
		}
		if (opno % 500 == 499)
			check_all();
		t = pwt_now() - t;
		if (t > worst)
			worst = t;
	}
	check_all();
	if (fsync(fd) || close(fd))
		fail("final fsync/close");
	printf("ops=%ld secs=%.3f max_op_ms=%.0f\n", ops, pwt_now() - t0, worst * 1000);
	return 0;
usage:
	fprintf(stderr, "usage: pwt-fsx FILE [-n OPS] [-m MAXSIZE_KB] [-l MAXLEN_KB] [-s SEED]\n");
	return 2;
}
