// SPDX-License-Identifier: GPL-2.0
/*
 * pwt-dm: the few device-mapper operations the EIO test needs, straight
 * through the DM ioctls (busybox has no dmsetup). Static, for the guest.
 *
 *   pwt-dm create NAME DEV   a linear map of all of DEV; prints "dm-N"
 *   pwt-dm delay NAME DEV MS a map of all of DEV whose writes and flushes
 *                            each complete MS milliseconds late (dm-delay):
 *                            a device whose throughput is bounded by what
 *                            is in flight, as a slow stick's or a disk's
 *                            latency bounds it; prints "dm-N"
 *   pwt-dm error NAME DEV    swap the live table for "error" (every I/O
 *                            fails with EIO) without flushing or freezing
 *                            the filesystem on it, so its dirty pages stay
 *                            dirty and meet the error in writeback
 *   pwt-dm suspend NAME      hold every new I/O of NAME until resume, the
 *                            file system on it not frozen: its writers go
 *                            on dirtying pages that cannot be cleaned, as
 *                            with a hung FUSE daemon or NFS server
 *   pwt-dm resume NAME       let the held I/O go
 *   pwt-dm remove NAME
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/dm-ioctl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static int ctl = -1;

/* One DM ioctl; @buf starts with a struct dm_ioctl of @size bytes total. */
static int dm_call(unsigned long cmd, void *buf, size_t size, const char *name, unsigned int flags)
{
	struct dm_ioctl *io = buf;

	io->version[0] = DM_VERSION_MAJOR;
	io->version[1] = 0;
	io->version[2] = 0;
	io->data_size = size;
	io->data_start = sizeof(*io);
	io->flags = flags;
	snprintf(io->name, sizeof(io->name), "%s", name);
	if (ioctl(ctl, cmd, io)) {
		fprintf(stderr, "pwt-dm: ioctl 0x%lx on %s: %s\n", cmd, name, strerror(errno));
		return -1;
	}
	return 0;
}

/* Load a one-target table into the inactive slot of @name. */
static int load(const char *name, const char *type, unsigned long long sectors,
		const char *params)
{
	char buf[sizeof(struct dm_ioctl) + sizeof(struct dm_target_spec) + 256];
	struct dm_target_spec *spec;

	memset(buf, 0, sizeof(buf));
	spec = (struct dm_target_spec *)(buf + sizeof(struct dm_ioctl));
	spec->sector_start = 0;
	spec->length = sectors;
	snprintf(spec->target_type, sizeof(spec->target_type), "%s", type);
	snprintf((char *)(spec + 1), 256, "%s", params);
	((struct dm_ioctl *)buf)->target_count = 1;
	return dm_call(DM_TABLE_LOAD, buf, sizeof(buf), name, 0);
}

/* Size in 512-byte sectors and "major:minor" of block device @dev. */
static int device(const char *dev, unsigned long long *sectors, char *majmin, size_t len)
{
	unsigned long long bytes;
	struct stat st;
	int fd = open(dev, O_RDONLY);

	if (fd < 0 || ioctl(fd, BLKGETSIZE64, &bytes) || fstat(fd, &st)) {
		fprintf(stderr, "pwt-dm: %s: %s\n", dev, strerror(errno));
		return -1;
	}
	close(fd);
	*sectors = bytes >> 9;
	snprintf(majmin, len, "%u:%u", major(st.st_rdev), minor(st.st_rdev));
	return 0;
}

/* Create @name with a one-target table and make it live; print its node. */
static int create(const char *name, const char *type, unsigned long long sectors,
		  const char *params)
{
	struct dm_ioctl io;

	memset(&io, 0, sizeof(io));
	if (dm_call(DM_DEV_CREATE, &io, sizeof(io), name, 0) ||
	    load(name, type, sectors, params))
		return 1;
	/* Resuming a device with a loaded table makes it live. */
	memset(&io, 0, sizeof(io));
	if (dm_call(DM_DEV_SUSPEND, &io, sizeof(io), name, 0))
		return 1;
	printf("dm-%u\n", minor(io.dev));
	return 0;
}

int main(int argc, char **argv)
{
	struct dm_ioctl io;
	unsigned long long sectors;
	char params[96], dev[24];

	if (argc < 3)
		goto usage;
	ctl = open("/dev/mapper/control", O_RDWR);
	if (ctl < 0) {
		perror("pwt-dm: /dev/mapper/control");
		return 1;
	}
	memset(&io, 0, sizeof(io));
	if (!strcmp(argv[1], "remove") && argc == 3)
		return dm_call(DM_DEV_REMOVE, &io, sizeof(io), argv[2], 0) ? 1 : 0;
	/* No lockfs, no flush: freezing would first write back every page. */
	if (!strcmp(argv[1], "suspend") && argc == 3)
		return dm_call(DM_DEV_SUSPEND, &io, sizeof(io), argv[2],
			       DM_SUSPEND_FLAG | DM_NOFLUSH_FLAG | DM_SKIP_LOCKFS_FLAG) ? 1 : 0;
	if (!strcmp(argv[1], "resume") && argc == 3)
		return dm_call(DM_DEV_SUSPEND, &io, sizeof(io), argv[2], DM_NOFLUSH_FLAG) ? 1 : 0;
	if (!strcmp(argv[1], "delay") && argc == 5) {
		if (device(argv[3], &sectors, dev, sizeof(dev)))
			return 1;
		/* Reads at once; writes, and the flushes that follow them, late. */
		snprintf(params, sizeof(params), "%s 0 0 %s 0 %d", dev, dev, atoi(argv[4]));
		return create(argv[2], "delay", sectors, params);
	}
	if (argc != 4 || device(argv[3], &sectors, params, sizeof(params) - 2))
		goto usage;
	if (!strcmp(argv[1], "create")) {
		strcat(params, " 0");
		return create(argv[2], "linear", sectors, params);
	}
	if (!strcmp(argv[1], "error")) {
		if (load(argv[2], "error", sectors, ""))
			return 1;
		/*
		 * No lockfs: freezing would write back every dirty page before
		 * the error target is in place, and there would be nothing left
		 * to fail.
		 */
		if (dm_call(DM_DEV_SUSPEND, &io, sizeof(io), argv[2],
			    DM_SUSPEND_FLAG | DM_NOFLUSH_FLAG | DM_SKIP_LOCKFS_FLAG))
			return 1;
		memset(&io, 0, sizeof(io));
		return dm_call(DM_DEV_SUSPEND, &io, sizeof(io), argv[2], DM_NOFLUSH_FLAG) ? 1 : 0;
	}
usage:
	fprintf(stderr, "usage: pwt-dm create|error NAME DEV | pwt-dm delay NAME DEV MS | pwt-dm suspend|resume|remove NAME\n");
	return 2;
}
