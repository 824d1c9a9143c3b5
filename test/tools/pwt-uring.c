// SPDX-License-Identifier: GPL-2.0
/*
 * pwt-uring: a buffered writer that writes only through io_uring, with raw
 * syscalls (no liburing in the guest). Static, for the guest torture tests.
 *
 *   pwt-uring FILE MB [-q DEPTH] [-b KB] [-s SEED]
 *     writes MB MiB of the pwt-pattern.h pattern (seed SEED, default 1) in
 *     KB KiB IORING_OP_WRITEs (default 1024), DEPTH in flight (default 8),
 *     then fsync()s. io_uring issues each write with IOCB_NOWAIT from the
 *     submitting task first and, on -EAGAIN, again from an io-wq worker
 *     ("iou-wrk-PID"), which is what the NOWAIT test looks at.
 *
 * Two things would make every NOWAIT write fail before it dirties a page,
 * so that balance_dirty_pages() never sees a BDP_ASYNC caller: a write
 * beyond EOF (XFS must zero up to it), and a write that has to update
 * mtime (file_modified() refuses that under IOCB_NOWAIT, and with coarse
 * timestamps nearly every write of a slow guest does). So the file is
 * truncated up to its full size first and, on XFS, written through a
 * descriptor from XFS's open-by-handle, which sets FMODE_NOCMTIME
 * ("invisible I/O", as HSMs use; root only). Elsewhere a plain descriptor
 * is used and the output says nocmtime=0.
 *
 * Prints "pid=P bytes=N secs=S nocmtime=0|1" and exits 0 only if every completion wrote
 * all it was asked to; any error or short write is named.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "pwt-pattern.h"

/* XFS's handle ioctls (xfs_fs.h, which the host may lack). */
struct xfs_handlereq {
	__u32 fd;
	void *path;
	__u32 oflags;
	void *ihandle;
	__u32 ihandlen;
	void *ohandle;
	__u32 *ohandlen;
};

#define XFS_IOC_FD_TO_HANDLE	_IOWR('X', 106, struct xfs_handlereq)
#define XFS_IOC_OPEN_BY_HANDLE	_IOWR('X', 107, struct xfs_handlereq)

/*
 * A second descriptor for @fd's file @path with FMODE_NOCMTIME, or -1. The
 * open ioctl wants a directory of the filesystem: the file's own.
 */
static int open_nocmtime(const char *path, int fd)
{
	unsigned char handle[256];
	struct xfs_handlereq req;
	__u32 len = sizeof(handle);
	char dir[4096], *slash;
	int dfd, ret;

	memset(&req, 0, sizeof(req));
	req.fd = fd;
	req.ohandle = handle;
	req.ohandlen = &len;
	if (ioctl(fd, XFS_IOC_FD_TO_HANDLE, &req))
		return -1;
	memset(&req, 0, sizeof(req));
	req.ihandle = handle;
	req.ihandlen = len;
	req.oflags = O_WRONLY;
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	dfd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY);
	if (dfd < 0)
		return -1;
	ret = ioctl(dfd, XFS_IOC_OPEN_BY_HANDLE, &req);
	close(dfd);
	return ret;
}

struct ring {
	int fd;
	unsigned int *sq_head, *sq_tail, *sq_mask, *sq_array;
	unsigned int *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
};

static int ring_init(struct ring *r, unsigned int entries)
{
	struct io_uring_params p;
	size_t sq_len, cq_len;
	char *sq, *cq;

	memset(&p, 0, sizeof(p));
	r->fd = syscall(__NR_io_uring_setup, entries, &p);
	if (r->fd < 0)
		return -1;
	sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned int);
	cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	/* Both rings share one mapping on every kernel we test (5.4+). */
	if (p.features & IORING_FEAT_SINGLE_MMAP && cq_len > sq_len)
		sq_len = cq_len;
	sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		  r->fd, IORING_OFF_SQ_RING);
	if (sq == MAP_FAILED)
		return -1;
	cq = sq;
	if (!(p.features & IORING_FEAT_SINGLE_MMAP)) {
		cq = mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
			  r->fd, IORING_OFF_CQ_RING);
		if (cq == MAP_FAILED)
			return -1;
	}
	r->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe),
		       PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
		       IORING_OFF_SQES);
	if (r->sqes == MAP_FAILED)
		return -1;
	r->sq_head = (unsigned int *)(sq + p.sq_off.head);
	r->sq_tail = (unsigned int *)(sq + p.sq_off.tail);
	r->sq_mask = (unsigned int *)(sq + p.sq_off.ring_mask);
	r->sq_array = (unsigned int *)(sq + p.sq_off.array);
	r->cq_head = (unsigned int *)(cq + p.cq_off.head);
	r->cq_tail = (unsigned int *)(cq + p.cq_off.tail);
	r->cq_mask = (unsigned int *)(cq + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	return 0;
}

/* Queue one write; the kernel sees it at the next io_uring_enter(). */
static void queue_write(struct ring *r, int fd, void *buf, unsigned int len,
			unsigned long long off, unsigned long long tag)
{
	unsigned int tail = *r->sq_tail, idx = tail & *r->sq_mask;
	struct io_uring_sqe *sqe = &r->sqes[idx];

	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_WRITE;
	sqe->fd = fd;
	sqe->addr = (unsigned long)buf;
	sqe->len = len;
	sqe->off = off;
	sqe->user_data = tag;
	r->sq_array[idx] = idx;
	/* The entry must be complete before the kernel can see the new tail. */
	__atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);
}

int main(int argc, char **argv)
{
	unsigned long long total, next = 0, done = 0;
	long depth = 8, bs_kb = 1024, seed = 1, i;
	unsigned int queued = 0, nfree;
	unsigned char **bufs;
	long *freeslots;
	struct ring r;
	size_t bs;
	double t0;
	int opt, fd, hfd;

	while ((opt = getopt(argc, argv, "q:b:s:")) != -1) {
		switch (opt) {
		case 'q':
			depth = atol(optarg);
			break;
		case 'b':
			bs_kb = atol(optarg);
			break;
		case 's':
			seed = atol(optarg);
			break;
		default:
			goto usage;
		}
	}
	if (argc - optind != 2 || depth < 1 || depth > 256 || bs_kb <= 0)
		goto usage;
	total = strtoull(argv[optind + 1], NULL, 0) << 20;
	bs = (size_t)bs_kb << 10;
	fd = open(argv[optind], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		fprintf(stderr, "pwt-uring: open %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	/* See the top of the file: no write beyond EOF, no mtime update. */
	if (ftruncate(fd, total)) {
		fprintf(stderr, "pwt-uring: ftruncate: %s\n", strerror(errno));
		return 1;
	}
	hfd = open_nocmtime(argv[optind], fd);
	if (hfd >= 0) {
		close(fd);
		fd = hfd;
	}
	if (ring_init(&r, depth)) {
		fprintf(stderr, "pwt-uring: io_uring setup: %s\n", strerror(errno));
		return 3;
	}
	/*
	 * One buffer per slot, and a stack of free slots: completions come in
	 * any order, and a buffer is refilled only after its own completion.
	 */
	bufs = calloc(depth, sizeof(*bufs));
	freeslots = calloc(depth, sizeof(*freeslots));
	for (i = 0; i < depth; i++) {
		bufs[i] = malloc(bs);
		freeslots[i] = i;
	}
	nfree = depth;

	t0 = pwt_now();
	while (done < total) {
		unsigned int head, tail;
		int ret;

		/* The tag carries the slot and the block number. */
		while (nfree && next < total) {
			unsigned int len = total - next < bs ? total - next : bs;
			long slot = freeslots[--nfree];

			pwt_fill(bufs[slot], len, seed, next);
			queue_write(&r, fd, bufs[slot], len, next,
				    (unsigned long long)slot << 40 | (next / bs));
			next += len;
			queued++;
		}
		ret = syscall(__NR_io_uring_enter, r.fd, queued, 1,
			      IORING_ENTER_GETEVENTS, NULL, 0);
		if (ret < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "pwt-uring: io_uring_enter: %s\n", strerror(errno));
			return 1;
		}
		queued -= ret;
		head = *r.cq_head;
		tail = __atomic_load_n(r.cq_tail, __ATOMIC_ACQUIRE);
		for (; head != tail; head++) {
			struct io_uring_cqe *cqe = &r.cqes[head & *r.cq_mask];
			unsigned long long blk = cqe->user_data & ((1ULL << 40) - 1);
			unsigned long long want = total - blk * bs < bs ? total - blk * bs : bs;

			if (cqe->res < 0 || (unsigned long long)cqe->res != want) {
				fprintf(stderr, "pwt-uring: write at %llu: %s (%d of %llu)\n",
					blk * bs,
					cqe->res < 0 ? strerror(-cqe->res) : "short",
					cqe->res, want);
				return 1;
			}
			done += cqe->res;
			freeslots[nfree++] = cqe->user_data >> 40;
		}
		__atomic_store_n(r.cq_head, head, __ATOMIC_RELEASE);
	}
	if (fsync(fd)) {
		fprintf(stderr, "pwt-uring: fsync: %s\n", strerror(errno));
		return 1;
	}
	close(fd);
	printf("pid=%d bytes=%llu secs=%.3f nocmtime=%d\n", getpid(), done, pwt_now() - t0,
	       hfd >= 0);
	return 0;
usage:
	fprintf(stderr, "usage: pwt-uring FILE MB [-q DEPTH] [-b KB] [-s SEED]\n");
	return 2;
}
