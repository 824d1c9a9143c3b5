// SPDX-License-Identifier: GPL-2.0
/*
 * pwthrottle's view of a device, and the wait of a forced writeback.
 *
 * Everything here is what the kernel already measures for the writer's
 * bdi_writeback (the per-device, per-cgroup writeback context): its write
 * bandwidth, smoothed (avg_write_bandwidth, updated every 200 ms while the
 * device writes), and its dirty and writeback page counts. All are plain
 * fields or per-CPU counters of a structure a module may read; nothing
 * unexported is called. The decisions made from them are plain C in
 * predict.c (pwt_decide_dev(), pwt_chunk_pages(), ...), tested on the host.
 * And who waits for a device: the fsyncs of other processes there, which
 * shrink an over-dirtier's in-flight bound (pwt_inode_bound_ms()).
 */
#include <linux/backing-dev.h>
#include <linux/fs.h>
#include <linux/hash.h>
#include <linux/hrtimer.h>
#include <linux/jiffies.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include "pwt_compat.h"
#include "pwthrottle.h"

/*
 * The kernel's starting guess for every device's bandwidth (INIT_BW,
 * mm/backing-dev.c: 100 MB/s). While both estimates still hold it, nothing
 * has been measured and the device is "unknown": pwthrottle then decides as
 * in 2005, without the device.
 */
#define PWT_KERNEL_INIT_BW (100 << (20 - PAGE_SHIFT))

/*
 * Sleeps while the device works off our writeback: no shorter than 1 ms
 * (below that the wakeups cost more than the device gains) and no longer
 * than 20 ms, so that a change of verdict, rmmod or the deadline is seen
 * within that time even if the bandwidth estimate is far off.
 */
#define PWT_MIN_SLEEP_US 1000
#define PWT_MAX_SLEEP_US 20000

/*
 * Who waits for a device. fsync() and fdatasync(), and O_SYNC and O_DSYNC
 * writes, reach the filesystem's ->fsync(), which on ext4, XFS, vfat,
 * exfat, f2fs and the others built on libfs starts by writing the file's
 * dirty pages and waiting for them: file_write_and_wait_range(), in
 * mm/filemap.c, called from other files and so never inlined into them.
 * (vfs_fsync_range(), the VFS's own entry, is inlined into the fsync()
 * path on 7.3: a probe there saw no fsync. btrfs writes its pages its own
 * way: there an over-dirtier keeps inflight_ms.) A kprobe on its entry
 * (an ftrace callback on these kernels, not a trap) notes, per device,
 * when a process last called it on a regular file there. An over-dirtier
 * of that device then keeps sync_inflight_ms in flight instead of
 * inflight_ms for a second (pwt_bound_ms()), and queues nothing until
 * sync_hold_ms after the call (pwt_sync_ticks_left(), pwt_wait_device()):
 * the fsync and its journal commit wait for what it has queued. A call is
 * the fsync's start, not its end (a probe on the return would have to
 * sit on each filesystem's ->fsync()), so the hold is a time, about an
 * fsync's own behind one bound. Its own fsyncs do not count (a
 * writer that syncs its own data, dpkg say, waits for that data anyway):
 * the slot keeps the caller's process. One slot per hash of the bdi,
 * holding that bdi (compared, never dereferenced: it may be gone), and the
 * last caller wins it: another device hashing to the slot, or another
 * process syncing on the same one, takes it over, and a slot read while it
 * is rewritten may mix two callers. Each costs at most a second of one
 * bound or the other, or a hold, which is why a hint needs no lock.
 */
/* 64 slots: far more than a machine's disks. */
#define PWT_SYNC_BITS 6

struct pwt_sync_slot {
	const struct backing_dev_info *bdi;
	/* jiffies | 1 of the call; 0: none yet */
	unsigned long seen;
	pid_t tgid;
};

static struct pwt_sync_slot pwt_sync_slots[1 << PWT_SYNC_BITS];

static int pwt_fsync_entry(struct kprobe *p, struct pt_regs *regs)
{
	struct file *file = (struct file *)regs_get_kernel_argument(regs, 0);
	struct inode *inode = file_inode(file);
	struct backing_dev_info *bdi;
	struct pwt_sync_slot *slot;
	unsigned long now = jiffies | 1;

	if (!S_ISREG(inode->i_mode))
		return 0;
	bdi = inode_to_bdi(inode);
	slot = &pwt_sync_slots[hash_ptr(bdi, PWT_SYNC_BITS)];
	/* A commit loop calls this thousands of times a second: write once a tick. */
	if (READ_ONCE(slot->seen) == now && READ_ONCE(slot->bdi) == bdi &&
	    READ_ONCE(slot->tgid) == current->tgid)
		return 0;
	WRITE_ONCE(slot->bdi, bdi);
	WRITE_ONCE(slot->tgid, current->tgid);
	WRITE_ONCE(slot->seen, now);
	return 0;
}

static struct kprobe pwt_fsync_probe = {
	.symbol_name = "file_write_and_wait_range",
	.pre_handler = pwt_fsync_entry,
};

static bool pwt_fsync_probed;

void pwt_sync_watch_init(void)
{
	int ret = register_kprobe(&pwt_fsync_probe);

	/* Not fatal: without it every over-dirtier keeps inflight_ms. */
	if (ret)
		pr_warn("no kprobe on file_write_and_wait_range (%d): others' fsync does not shrink the in-flight bound\n",
			ret);
	pwt_fsync_probed = !ret;
}

/*
 * After the hook is gone, before the module's text is: unregistering waits
 * for handlers running on other CPUs (synchronize_rcu()).
 */
void pwt_sync_watch_exit(void)
{
	if (pwt_fsync_probed)
		unregister_kprobe(&pwt_fsync_probe);
}

/*
 * When another process last entered an fsync on @inode's device, as its
 * slot says (jiffies | 1), or 0: none, another device's, or current's own.
 */
static unsigned long pwt_others_sync_seen(struct inode *inode)
{
	struct backing_dev_info *bdi = inode_to_bdi(inode);
	const struct pwt_sync_slot *slot;
	unsigned long seen;

	slot = &pwt_sync_slots[hash_ptr(bdi, PWT_SYNC_BITS)];
	seen = READ_ONCE(slot->seen);
	if (READ_ONCE(slot->bdi) != bdi ||
	    READ_ONCE(slot->tgid) == current->tgid)
		return 0;
	return seen;
}

/*
 * The in-flight bound for an over-dirtier of @inode's device, in ms, and
 * in *@fsync_waits (if not NULL) whether it is the fsync bound: told from
 * the same read of the knobs, which a write may change meanwhile.
 */
u64 pwt_inode_bound_ms(struct inode *inode, bool *fsync_waits)
{
	u64 inflight_ms = READ_ONCE(pwt_inflight_ms.val);
	u64 sync_ms = READ_ONCE(pwt_sync_inflight_ms.val);
	u64 bound_ms;

	bound_ms = pwt_bound_ms(inflight_ms, sync_ms,
				pwt_others_sync_seen(inode), jiffies, HZ);
	if (fsync_waits)
		*fsync_waits = bound_ms < inflight_ms;
	return bound_ms;
}

/* Ticks to hold writeback back for another process's fsync (sync_hold_ms). */
static unsigned long pwt_inode_sync_hold(struct inode *inode)
{
	return pwt_sync_ticks_left(READ_ONCE(pwt_sync_hold_ms.val),
				   pwt_others_sync_seen(inode), jiffies, HZ);
}

void pwt_read_dev(struct inode *inode, struct pwt_dev *d)
{
	struct bdi_writeback *wb;
	unsigned long bw, wbw;

	/* wbs are freed after a grace period (see pwt_inode_wb()). */
	rcu_read_lock();
	wb = pwt_inode_wb(inode);
	bw = READ_ONCE(wb->avg_write_bandwidth);
	wbw = READ_ONCE(wb->write_bandwidth);
	d->writeback = wb_stat(wb, WB_WRITEBACK);
	d->backlog = wb_stat(wb, WB_RECLAIMABLE) + d->writeback;
	rcu_read_unlock();
	d->bw = bw == PWT_KERNEL_INIT_BW && wbw == PWT_KERNEL_INIT_BW ? 0 : bw;
}

/*
 * Wait while the device has more than half of inflight_ms of its bandwidth
 * under writeback (pwt_inflight_pages()); the caller waits so before it
 * queues two chunks of a quarter each (pwt_queue_pages()), and after.
 * Before: several over-dirtiers of one device (a threaded copier's threads)
 * each look for room just before they queue, so they take turns within the
 * bound instead of all queueing their two chunks on top of each other's.
 * After: the task dirties its next chunk only once the device is down to
 * half the bound, so it never gets more than that ahead; the device never
 * idles, and other tasks' I/O queues behind no more than inflight_ms of
 * ours (the flusher's own writeback of a backlog comes on top, until it has
 * drained).
 *
 * Nothing in the kernel wakes a waiter when a wb's writeback count falls,
 * and the waits that exist (a folio's writeback bit) have no timeout and
 * would not see rmmod. So we sleep, on an hrtimer, for the time the device
 * needs to write the excess at its measured bandwidth, and look again:
 * one or two wakeups per wait instead of a poll every jiffy. (Not counted
 * as iowait: io_schedule_prepare() is not exported.)
 *
 * With @hold_end (0: none), also while another process's fsync on the
 * device is under sync_hold_ms old, until @hold_end: the caller waits so
 * before it queues, for at most sync_hold_ms in a forced writeback.
 *
 * Killable, and bounded by @deadline (max_pause_ms for both waits together,
 * like the kernel's own pause in balance_dirty_pages()); it also ends when
 * the task is no longer predicted over (by the device or the memory rule,
 * pwt_decide_dev()), or when rmmod begins. Returns why it ended; *@d is
 * the device as last read, *@limit the bound.
 */
enum pwt_wait_end pwt_wait_device(struct inode *inode, u64 future,
				  ktime_t deadline, ktime_t hold_end,
				  struct pwt_dev *d, u64 *limit)
{
	u64 window_ms = READ_ONCE(pwt_ratio_centisecs) * 10;
	u64 inflight_ms = pwt_inode_bound_ms(inode, NULL);
	u64 max_chunk = READ_ONCE(pwt_write_chunk_pages.val);
	unsigned long hold;
	struct pwt_global g;
	bool over = true, held = false;
	ktime_t sleep, now;
	s64 left_us;
	u64 us;

	pwt_read_dev(inode, d);
	*limit = pwt_inflight_pages(d, inflight_ms, max_chunk);
	for (;;) {
		now = ktime_get();
		if (hold_end && ktime_before(now, hold_end))
			hold = pwt_inode_sync_hold(inode);
		else
			hold = 0;
		if (d->writeback <= *limit / 2 && !hold)
			break;
		if (fatal_signal_pending(current))
			return PWT_WAIT_KILLED;
		if (READ_ONCE(pwt_unloading))
			return PWT_WAIT_UNLOADING;
		left_us = ktime_us_delta(deadline, now);
		if (left_us <= 0)
			return PWT_WAIT_DEADLINE;
		pwt_read_global(&g);
		if (!pwt_decide_dev(&g, d, future, window_ms, &over))
			return PWT_WAIT_NOT_OVER;
		if (d->writeback > *limit / 2) {
			us = pwt_drain_us(d, d->writeback - *limit / 2,
					  PWT_MIN_SLEEP_US, PWT_MAX_SLEEP_US);
		} else {
			/* Room, but an fsync's turn: until it ends or hold_end. */
			if (!held)
				pwt_stat_add(sync_held, 1);
			held = true;
			us = min_t(u64, jiffies_to_usecs(hold),
				   ktime_us_delta(hold_end, now));
			us = clamp_t(u64, us, PWT_MIN_SLEEP_US,
				     PWT_MAX_SLEEP_US);
		}
		us = min_t(u64, us, left_us);
		sleep = ns_to_ktime(us * NSEC_PER_USEC);
		__set_current_state(TASK_KILLABLE);
		/* An eighth of slack lets the timer be batched with others. */
		schedule_hrtimeout_range(&sleep, us * NSEC_PER_USEC / 8,
					 HRTIMER_MODE_REL);
		pwt_read_dev(inode, d);
		inflight_ms = pwt_inode_bound_ms(inode, NULL);
		*limit = pwt_inflight_pages(d, inflight_ms, max_chunk);
	}
	return PWT_WAIT_DONE;
}

/*
 * Read *@d again after a forced writeback of @written pages, recompute
 * *@limit, and tell whether the device absorbed them (pwt_dev_absorbed()).
 */
bool pwt_dev_absorbed_now(struct inode *inode, long written, struct pwt_dev *d,
			  u64 *limit)
{
	u64 inflight_ms = pwt_inode_bound_ms(inode, NULL);
	u64 max_chunk = READ_ONCE(pwt_write_chunk_pages.val);

	pwt_read_dev(inode, d);
	*limit = pwt_inflight_pages(d, inflight_ms, max_chunk);
	return pwt_dev_absorbed(d, written, inflight_ms, max_chunk);
}
