// SPDX-License-Identifier: GPL-2.0
/*
 * pwt-writer: a buffered writer for the guest tests, statically linked.
 *
 *   pwt-writer FILE MB [-b KB] [-f MB] [-s] [-S MB] [-t SECS] [-h SECS] [-F]
 *              [-r PASSES] [-C] [-R MBPS] [-d] [-D MB]
 *     -b KB    write() size (default 1024)
 *     -d       O_DIRECT: the same traffic to the disk, no page cache, so no
 *              dirty page and no throttle of any kind (a benchmark's
 *              control); -b must then be a multiple of 4
 *     -f MB    many-files mode, like untar or rsync: write FILE.0, FILE.1,
 *              ... of MB each (closing each) until the total is reached
 *     -s       fsync() before stopping the clock
 *     -S MB    fsync() after every MB written, as a copier that syncs as it
 *              goes does (dpkg after each file, rsync --fsync)
 *     -t SECS  stop after SECS seconds even if MB not reached (0 = no limit)
 *     -h SECS  stay alive SECS seconds after the writing (so tests can look
 *              at this task in debugfs while it exists)
 *     -F       run as a real-time task (SCHED_FIFO, priority 1)
 *     -R MBPS  write at most MBPS MiB/s (sleeping between writes): a hog
 *              slower than its disk
 *     -r PASSES  rewrite mode: overwrite the first MB of the existing FILE
 *              PASSES times with pwrite(), timing each pass's write()s
 *              only. The pages stay cached, so after the first pass no
 *              write dirties a new page: what is left is the cost of the
 *              write path itself, hook included. Prints
 *              "writes=N ns_per_write=X" for the fastest pass.
 *     -D MB    drop behind: drop the file's pages from the page cache once
 *              they are MB behind the write position (POSIX_FADV_DONTNEED),
 *              as a copier that does not want its data cached would; a
 *              benchmark's control for what reclaiming a copy's clean
 *              cache costs the other tasks
 *     -C       with -r: write the file's pages back before each pass
 *              (fdatasync(), not timed), so that every write of the pass
 *              dirties a clean page, as a copy's writes do
 *
 * Prints "pid=P bytes=N secs=S.sss mbps=R" on stdout when done, "ready" on
 * stderr after the writing and before the hold. Exit 1 on any error, with
 * the failing call named: a lost write error must be visible.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* -D: how much is dropped at a time (a page cache walk per call). */
#define DROP_STEP (4ULL << 20)

static int open_flags = O_WRONLY | O_CREAT | O_TRUNC;

/* Open FILE, or FILE.N in many-files mode (n >= 0). */
static int open_next(const char *base, long n)
{
	char name[4096];
	int fd;

	if (n < 0)
		snprintf(name, sizeof(name), "%s", base);
	else
		snprintf(name, sizeof(name), "%s.%ld", base, n);
	fd = open(name, open_flags, 0644);
	if (fd < 0)
		fprintf(stderr, "open %s: %s\n", name, strerror(errno));
	return fd;
}

static int rewrite(const char *name, unsigned long long bytes, size_t bs,
		   long passes, int clean, const char *buf)
{
	double best = 0, t0, secs;
	unsigned long long off, n;
	long p;
	int fd;

	fd = open(name, O_WRONLY);
	if (fd < 0) {
		fprintf(stderr, "open %s: %s\n", name, strerror(errno));
		return 1;
	}
	n = bytes / bs;
	for (p = 0; p < passes; p++) {
		if (clean && fdatasync(fd)) {
			fprintf(stderr, "fdatasync: %s\n", strerror(errno));
			return 1;
		}
		t0 = now();
		for (off = 0; off + bs <= bytes; off += bs) {
			if (pwrite(fd, buf, bs, off) != (ssize_t)bs) {
				fprintf(stderr, "pwrite: %s\n", strerror(errno));
				return 1;
			}
		}
		secs = now() - t0;
		if (p == 0 || secs < best)
			best = secs;
	}
	if (close(fd)) {
		fprintf(stderr, "close: %s\n", strerror(errno));
		return 1;
	}
	printf("pid=%d writes=%llu passes=%ld ns_per_write=%.1f\n", getpid(), n,
	       passes, n ? best * 1e9 / n : 0.0);
	return 0;
}

int main(int argc, char **argv)
{
	long bs_kb = 1024, hold = 0, file_mb = 0, nfile = 0, passes = 0;
	unsigned long long in_file = 0, per_file;
	double limit = 0, rate = 0, t0, secs;
	int opt, fd, do_fsync = 0, clean = 0;
	unsigned long long total, done = 0, lag = 0, dropped = 0;
	unsigned long long sync_every = 0, since_sync = 0;
	char *buf;

	while ((opt = getopt(argc, argv, "b:f:sS:t:h:Fr:CR:dD:")) != -1) {
		switch (opt) {
		case 'F': {
			struct sched_param sp = { .sched_priority = 1 };

			if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
				fprintf(stderr, "sched_setscheduler: %s\n", strerror(errno));
				return 1;
			}
			break;
		}
		case 'b':
			bs_kb = atol(optarg);
			break;
		case 'f':
			file_mb = atol(optarg);
			break;
		case 's':
			do_fsync = 1;
			break;
		case 'S':
			sync_every = strtoull(optarg, NULL, 0) << 20;
			if (!sync_every)
				goto usage;
			break;
		case 'd':
			open_flags |= O_DIRECT;
			break;
		case 't':
			limit = atof(optarg);
			break;
		case 'h':
			hold = atol(optarg);
			break;
		case 'R':
			rate = atof(optarg);
			if (rate <= 0)
				goto usage;
			break;
		case 'r':
			passes = atol(optarg);
			if (passes <= 0)
				goto usage;
			break;
		case 'C':
			clean = 1;
			break;
		case 'D':
			lag = strtoull(optarg, NULL, 0) << 20;
			if (!lag)
				goto usage;
			break;
		default:
			goto usage;
		}
	}
	if (argc - optind != 2 || bs_kb <= 0 || (clean && !passes))
		goto usage;
	total = strtoull(argv[optind + 1], NULL, 0) << 20;
	/* O_DIRECT wants the buffer aligned to the logical block size. */
	if (posix_memalign((void **)&buf, 4096, bs_kb << 10))
		return 1;
	memset(buf, 0x5a, bs_kb << 10);
	if (passes)
		return rewrite(argv[optind], total, bs_kb << 10, passes, clean, buf);
	per_file = file_mb > 0 ? (unsigned long long)file_mb << 20 : total;
	t0 = now();
	fd = open_next(argv[optind], file_mb > 0 ? nfile++ : -1);
	if (fd < 0)
		return 1;
	while (done < total && (!limit || now() - t0 < limit)) {
		size_t n = bs_kb << 10;
		ssize_t w;

		if (in_file == per_file) {
			if (close(fd)) {
				fprintf(stderr, "close: %s\n", strerror(errno));
				return 1;
			}
			fd = open_next(argv[optind], nfile++);
			if (fd < 0)
				return 1;
			in_file = 0;
			dropped = 0;
		}
		if (total - done < n)
			n = total - done;
		if (per_file - in_file < n)
			n = per_file - in_file;
		w = write(fd, buf, n);
		if (w < 0) {
			fprintf(stderr, "write: %s\n", strerror(errno));
			return 1;
		}
		done += w;
		in_file += w;
		since_sync += w;
		if (sync_every && since_sync >= sync_every) {
			if (fsync(fd)) {
				fprintf(stderr, "fsync: %s\n", strerror(errno));
				return 1;
			}
			since_sync = 0;
		}
		if (lag && in_file > dropped + lag + DROP_STEP) {
			if (posix_fadvise(fd, dropped, in_file - lag - dropped,
					  POSIX_FADV_DONTNEED)) {
				fprintf(stderr, "posix_fadvise: %s\n", strerror(errno));
				return 1;
			}
			dropped = in_file - lag;
		}
		if (rate) {
			double ahead = done / 1048576.0 / rate - (now() - t0);

			if (ahead > 0)
				usleep(ahead * 1e6);
		}
	}
	if (do_fsync && fsync(fd)) {
		fprintf(stderr, "fsync: %s\n", strerror(errno));
		return 1;
	}
	secs = now() - t0;
	if (close(fd)) {
		fprintf(stderr, "close: %s\n", strerror(errno));
		return 1;
	}
	printf("pid=%d bytes=%llu secs=%.3f mbps=%.2f\n", getpid(), done, secs,
	       secs > 0 ? done / 1048576.0 / secs : 0.0);
	fflush(stdout);
	fprintf(stderr, "ready\n");
	if (hold)
		sleep(hold);
	return 0;
usage:
	fprintf(stderr, "usage: pwt-writer FILE MB [-b KB] [-f MB] [-s] [-S MB] [-t SECS]\n"
			"                  [-h SECS] [-F] [-r PASSES [-C]] [-R MBPS] [-d] [-D MB]\n");
	return 2;
}
