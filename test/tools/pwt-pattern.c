// SPDX-License-Identifier: GPL-2.0
/*
 * pwt-pattern: write files of a verifiable pattern (pwt-pattern.h) through
 * each way a task dirties page cache, and verify them later. Static, for the
 * guest torture tests.
 *
 *   pwt-pattern [-m MODE] [-S MB] [-n FILES] [-k KEEP] [-s SEED] [-b KB] PATH
 *     MODE   write: buffered write() (default)
 *            fsync: write() and fsync() after every one
 *            mmap:  stores through a MAP_SHARED mapping (write faults)
 *            direct: O_DIRECT write() (no page cache)
 *     -S MB  size of each file (default 8)
 *     -n N   stop after N files; 0 (default): until SIGTERM or SIGINT, which
 *            end the run after the file being written is complete
 *     -k K   reuse K names, PATH.0 .. PATH.K-1, so disk use stays bounded
 *            (default 4); file number i has seed SEED * 1000003 + i
 *     -b KB  size of one write() or one store burst (default 1024)
 *   On exit it writes PATH.manifest, one "NAME SEED BYTES" line per name
 *   holding complete data, and prints "files=N bytes=B secs=S".
 *
 *   pwt-pattern -v FILE SEED BYTES   verify one file
 *   pwt-pattern -V MANIFEST          verify every file a manifest lists
 *
 * Every failing call is named and exits 1, so a write error the kernel
 * reports is never lost; a verify mismatch names file and offset.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "pwt-pattern.h"

#define MAX_KEEP 64

/*
 * SIGTERM and SIGINT stay blocked and are looked for between files: the file
 * being written is always completed, and no handler is needed.
 */
static int stop_requested(void)
{
	sigset_t set;

	return !sigpending(&set) && (sigismember(&set, SIGTERM) || sigismember(&set, SIGINT));
}

static int die(const char *what, const char *name)
{
	fprintf(stderr, "pwt-pattern: %s %s: %s\n", what, name, strerror(errno));
	return -1;
}

/* write() all of @len, restarting after short writes. */
static int write_all(int fd, const unsigned char *buf, size_t len, const char *name)
{
	while (len) {
		ssize_t w = write(fd, buf, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return die("write", name);
		}
		buf += w;
		len -= w;
	}
	return 0;
}

static int write_file(const char *name, const char *mode, uint64_t seed,
		      size_t size, size_t bs, unsigned char *buf)
{
	int direct = !strcmp(mode, "direct"), map = !strcmp(mode, "mmap");
	int dosync = !strcmp(mode, "fsync");
	size_t off;
	int fd;

	fd = open(name, O_RDWR | O_CREAT | O_TRUNC | (direct ? O_DIRECT : 0), 0644);
	if (fd < 0)
		return die("open", name);
	if (map) {
		unsigned char *p;

		if (ftruncate(fd, size))
			return die("ftruncate", name);
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			return die("mmap", name);
		for (off = 0; off < size; off += bs)
			pwt_fill(p + off, size - off < bs ? size - off : bs, seed, off);
		if (munmap(p, size))
			return die("munmap", name);
	} else {
		for (off = 0; off < size; off += bs) {
			size_t n = size - off < bs ? size - off : bs;

			pwt_fill(buf, n, seed, off);
			if (write_all(fd, buf, n, name))
				return -1;
			if (dosync && fsync(fd))
				return die("fsync", name);
		}
	}
	if (close(fd))
		return die("close", name);
	return 0;
}

static int verify_file(const char *name, uint64_t seed, unsigned long long bytes)
{
	static unsigned char buf[1 << 20], exp[1 << 20];
	unsigned long long off = 0;
	int fd = open(name, O_RDONLY);

	if (fd < 0)
		return die("open", name);
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		long long bad;

		if (n < 0)
			return die("read", name);
		if (!n)
			break;
		bad = pwt_check(buf, exp, n, seed, off);
		if (bad >= 0) {
			fprintf(stderr, "pwt-pattern: %s: wrong data at offset %lld (seed %llu)\n",
				name, bad, (unsigned long long)seed);
			return -1;
		}
		off += n;
	}
	close(fd);
	if (off != bytes) {
		fprintf(stderr, "pwt-pattern: %s: %llu bytes, want %llu\n", name, off, bytes);
		return -1;
	}
	return 0;
}

static int verify_manifest(const char *path)
{
	unsigned long long seed, bytes, total = 0;
	char name[4096];
	int files = 0, bad = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return die("open", path) ? 1 : 0;
	while (fscanf(f, "%4095s %llu %llu", name, &seed, &bytes) == 3) {
		files++;
		total += bytes;
		if (verify_file(name, seed, bytes))
			bad++;
	}
	fclose(f);
	printf("verified=%d bad=%d bytes=%llu\n", files, bad, total);
	return bad || !files;
}

int main(int argc, char **argv)
{
	unsigned long long seeds[MAX_KEEP], sizes[MAX_KEEP], total = 0;
	long mb = 8, nfiles = 0, keep = 4, bs_kb = 1024, seed = 1, i;
	const char *mode = "write";
	char name[4096];
	unsigned char *buf;
	sigset_t stopsigs;
	double t0;
	FILE *man;
	int opt;

	while ((opt = getopt(argc, argv, "m:S:n:k:s:b:v:V:")) != -1) {
		switch (opt) {
		case 'm':
			mode = optarg;
			break;
		case 'S':
			mb = atol(optarg);
			break;
		case 'n':
			nfiles = atol(optarg);
			break;
		case 'k':
			keep = atol(optarg);
			break;
		case 's':
			seed = atol(optarg);
			break;
		case 'b':
			bs_kb = atol(optarg);
			break;
		case 'v':
			if (argc - optind != 2)
				goto usage;
			return verify_file(optarg, strtoull(argv[optind], NULL, 0),
					   strtoull(argv[optind + 1], NULL, 0)) ? 1 : 0;
		case 'V':
			return verify_manifest(optarg);
		default:
			goto usage;
		}
	}
	if (argc - optind != 1 || mb <= 0 || keep < 1 || keep > MAX_KEEP || bs_kb <= 0 ||
	    (strcmp(mode, "write") && strcmp(mode, "fsync") && strcmp(mode, "mmap") &&
	     strcmp(mode, "direct")))
		goto usage;
	/* O_DIRECT wants an aligned buffer; 4096 suits every mode. */
	if (posix_memalign((void **)&buf, 4096, bs_kb << 10))
		return 1;
	sigemptyset(&stopsigs);
	sigaddset(&stopsigs, SIGTERM);
	sigaddset(&stopsigs, SIGINT);
	sigprocmask(SIG_BLOCK, &stopsigs, NULL);

	t0 = pwt_now();
	for (i = 0; !stop_requested() && (!nfiles || i < nfiles); i++) {
		uint64_t s = (uint64_t)seed * 1000003 + i;

		snprintf(name, sizeof(name), "%s.%ld", argv[optind], i % keep);
		/* A name being rewritten holds no complete data until done. */
		sizes[i % keep] = 0;
		if (write_file(name, mode, s, (size_t)mb << 20, bs_kb << 10, buf))
			return 1;
		seeds[i % keep] = s;
		sizes[i % keep] = (unsigned long long)mb << 20;
		total += (unsigned long long)mb << 20;
	}
	snprintf(name, sizeof(name), "%s.manifest", argv[optind]);
	man = fopen(name, "w");
	if (!man)
		return die("open", name) ? 1 : 0;
	for (opt = 0; opt < keep && opt < i; opt++)
		if (sizes[opt])
			fprintf(man, "%s.%d %llu %llu\n", argv[optind], opt, seeds[opt],
				sizes[opt]);
	if (fclose(man))
		return die("close", name) ? 1 : 0;
	printf("files=%ld bytes=%llu secs=%.3f\n", i, total, pwt_now() - t0);
	return 0;
usage:
	fprintf(stderr, "usage: pwt-pattern [-m write|fsync|mmap|direct] [-S MB] [-n FILES]\n"
		"                   [-k KEEP] [-s SEED] [-b KB] PATH\n"
		"       pwt-pattern -v FILE SEED BYTES | -V MANIFEST\n");
	return 2;
}
