// SPDX-License-Identifier: GPL-2.0
/*
 * pwt-fork: a storm of short-lived writers, processes or threads. Static,
 * for the guest torture tests.
 *
 *   pwt-fork DIR TOTAL [-t] [-w WAVE] [-k KB] [-h SECS] [-p MS]
 *     TOTAL writers in waves of WAVE (default 500) alive at once: each writes
 *     KB KiB (default 64) to DIR/f.N (N = 0 .. TOTAL-1), waits until its whole wave has
 *     written, then exits. Holding the wave together is what makes more
 *     writers exist at once than pwthrottle's max_tasks.
 *     -t  threads of this process instead of child processes
 *     -h  hold each wave alive SECS seconds after it has written (idle
 *         writers that still exist)
 *     -p  pause MS milliseconds between waves (a build's many small files
 *         from short processes, at a build's pace)
 *
 * Prints "writers=N failed=F secs=S"; exit 1 if any writer failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "pwt-pattern.h"

static const char *dir;
static size_t bytes;
static unsigned int hold;
static long wave_base;		/* writers of earlier waves: files never repeat */
static pthread_barrier_t wave_done;

/* One writer's work: 0 on success. */
static int write_one(long slot)
{
	unsigned char buf[16384];
	char name[4096];
	size_t off;
	int fd;

	slot += wave_base;
	snprintf(name, sizeof(name), "%s/f.%ld", dir, slot);
	fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		fprintf(stderr, "pwt-fork: open %s: %s\n", name, strerror(errno));
		return 1;
	}
	for (off = 0; off < bytes; off += sizeof(buf)) {
		size_t n = bytes - off < sizeof(buf) ? bytes - off : sizeof(buf);

		pwt_fill(buf, n, slot, off);
		if (write(fd, buf, n) != (ssize_t)n) {
			fprintf(stderr, "pwt-fork: write %s: %s\n", name, strerror(errno));
			close(fd);
			return 1;
		}
	}
	return close(fd) ? 1 : 0;
}

static void *thread_fn(void *arg)
{
	long ret = write_one((long)arg);

	pthread_barrier_wait(&wave_done);
	sleep(hold);
	return (void *)ret;
}

/* A wave of @n threads; returns how many failed. */
static int thread_wave(int n)
{
	pthread_t *tids = calloc(n, sizeof(*tids));
	pthread_attr_t attr;
	int i, failed = 0;
	void *ret;

	pthread_attr_init(&attr);
	/* 500 default 8 MiB stacks would be 4 GiB of address space. */
	pthread_attr_setstacksize(&attr, 64 << 10);
	pthread_barrier_init(&wave_done, NULL, n);
	for (i = 0; i < n; i++)
		if (pthread_create(&tids[i], &attr, thread_fn, (void *)(long)i)) {
			fprintf(stderr, "pwt-fork: pthread_create failed\n");
			exit(1);
		}
	for (i = 0; i < n; i++) {
		pthread_join(tids[i], &ret);
		failed += !!ret;
	}
	pthread_barrier_destroy(&wave_done);
	pthread_attr_destroy(&attr);
	free(tids);
	return failed;
}

/*
 * A wave of @n processes. Each reports on @done after writing and then
 * blocks reading @go until the parent closes it: the whole wave is alive
 * at once, then it exits at once.
 */
static int process_wave(int n)
{
	int done[2], go[2], i, status, failed = 0;
	char c;

	if (pipe(done) || pipe(go)) {
		perror("pwt-fork: pipe");
		exit(1);
	}
	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("pwt-fork: fork");
			exit(1);
		}
		if (!pid) {
			int ret;

			close(go[1]);
			close(done[0]);
			ret = write_one(i);
			if (write(done[1], "x", 1) != 1)
				_exit(1);
			while (read(go[0], &c, 1) > 0)
				;
			_exit(ret);
		}
	}
	close(done[1]);
	close(go[0]);
	for (i = 0; i < n; i++)
		if (read(done[0], &c, 1) != 1)
			break;
	sleep(hold);
	close(done[0]);
	close(go[1]);
	while (wait(&status) > 0)
		failed += !WIFEXITED(status) || WEXITSTATUS(status);
	return failed;
}

int main(int argc, char **argv)
{
	long total, wave = 500, kb = 64, done = 0, failed = 0, pause_ms = 0;
	int opt, threads = 0;
	double t0;

	while ((opt = getopt(argc, argv, "tw:k:h:p:")) != -1) {
		switch (opt) {
		case 't':
			threads = 1;
			break;
		case 'w':
			wave = atol(optarg);
			break;
		case 'k':
			kb = atol(optarg);
			break;
		case 'h':
			hold = atoi(optarg);
			break;
		case 'p':
			pause_ms = atol(optarg);
			break;
		default:
			goto usage;
		}
	}
	if (argc - optind != 2 || wave <= 0 || kb < 0)
		goto usage;
	dir = argv[optind];
	total = atol(argv[optind + 1]);
	bytes = (size_t)kb << 10;
	t0 = pwt_now();
	while (done < total) {
		int n = total - done < wave ? total - done : wave;

		wave_base = done;
		failed += threads ? thread_wave(n) : process_wave(n);
		done += n;
		if (pause_ms > 0 && done < total)
			usleep(pause_ms * 1000);
	}
	printf("writers=%ld failed=%ld secs=%.3f\n", done, failed, pwt_now() - t0);
	return failed != 0;
usage:
	fprintf(stderr, "usage: pwt-fork DIR TOTAL [-t] [-w WAVE] [-k KB] [-h SECS] [-p MS]\n");
	return 2;
}
