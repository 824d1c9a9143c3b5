// SPDX-License-Identifier: GPL-2.0
/*
 * pwt-memhog: take anonymous memory and keep touching it, so the page cache
 * of the writers beside it has to live in what is left. Static, for the
 * guest torture tests.
 *
 *   pwt-memhog MB [-r RESERVE_MB] [-t SECS]
 *     grows to MB MiB, 1 MiB at a time, but stops growing while MemAvailable
 *     is below RESERVE_MB (default 64): the point is pressure on reclaim,
 *     not an OOM kill, which would say nothing about pwthrottle. Then writes
 *     to every page again and again until SECS (default 30) have passed or
 *     SIGTERM arrives.
 *
 * Says "grown N" on stderr once it stops growing, so a test can start its
 * writers under full pressure, and prints "held_mb=N passes=P" at the end.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "pwt-pattern.h"

/* SIGTERM stays blocked and is looked for between passes: no handler. */
static int stop_requested(void)
{
	sigset_t set;

	return !sigpending(&set) && sigismember(&set, SIGTERM);
}

static long mem_available_mb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb < 0 ? -1 : kb >> 10;
}

int main(int argc, char **argv)
{
	long want, reserve = 64, held = 0, passes = 0, i, pg, grown = 0;
	unsigned char **chunks;
	double secs = 30, t0;
	sigset_t stopsig;
	int opt;

	while ((opt = getopt(argc, argv, "r:t:")) != -1) {
		switch (opt) {
		case 'r':
			reserve = atol(optarg);
			break;
		case 't':
			secs = atof(optarg);
			break;
		default:
			goto usage;
		}
	}
	if (argc - optind != 1)
		goto usage;
	want = atol(argv[optind]);
	if (want <= 0)
		goto usage;
	sigemptyset(&stopsig);
	sigaddset(&stopsig, SIGTERM);
	sigprocmask(SIG_BLOCK, &stopsig, NULL);
	chunks = calloc(want, sizeof(*chunks));
	t0 = pwt_now();
	while (!stop_requested() && pwt_now() - t0 < secs) {
		/* Grow while there is room, then only touch. */
		if (held < want && mem_available_mb() > reserve) {
			chunks[held] = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
					    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (chunks[held] == MAP_FAILED)
				break;
			memset(chunks[held], 0xa5, 1 << 20);
			held++;
			continue;
		}
		if (!grown) {
			fprintf(stderr, "grown %ld\n", held);
			grown = 1;
		}
		for (i = 0; i < held; i++)
			for (pg = 0; pg < (1 << 20); pg += 4096)
				chunks[i][pg]++;
		passes++;
		usleep(10000);
	}
	printf("held_mb=%ld passes=%ld\n", held, passes);
	return 0;
usage:
	fprintf(stderr, "usage: pwt-memhog MB [-r RESERVE_MB] [-t SECS]\n");
	return 2;
}
