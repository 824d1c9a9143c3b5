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
 */
#include <linux/backing-dev.h>
#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
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
 * Killable, and bounded by @deadline (max_pause_ms for both waits together,
 * like the kernel's own pause in balance_dirty_pages()); it also ends when
 * the task is no longer predicted over (by the device or the memory rule,
 * pwt_decide_dev()), or when rmmod begins. Returns why it ended; *@d is
 * the device as last read, *@limit the bound.
 */
enum pwt_wait_end pwt_wait_device(struct inode *inode, u64 future,
				  ktime_t deadline, struct pwt_dev *d,
				  u64 *limit)
{
	u64 window_ms = READ_ONCE(pwt_ratio_centisecs) * 10;
	u64 inflight_ms = READ_ONCE(pwt_inflight_ms.val);
	u64 max_chunk = READ_ONCE(pwt_write_chunk_pages.val);
	struct pwt_global g;
	bool over = true;
	ktime_t sleep;
	s64 left_us;
	u64 us;

	pwt_read_dev(inode, d);
	*limit = pwt_inflight_pages(d, inflight_ms, max_chunk);
	while (d->writeback > *limit / 2) {
		if (fatal_signal_pending(current))
			return PWT_WAIT_KILLED;
		if (READ_ONCE(pwt_unloading))
			return PWT_WAIT_UNLOADING;
		left_us = ktime_us_delta(deadline, ktime_get());
		if (left_us <= 0)
			return PWT_WAIT_DEADLINE;
		pwt_read_global(&g);
		if (!pwt_decide_dev(&g, d, future, window_ms, &over))
			return PWT_WAIT_NOT_OVER;
		us = pwt_drain_us(d, d->writeback - *limit / 2,
				  PWT_MIN_SLEEP_US, PWT_MAX_SLEEP_US);
		us = min_t(u64, us, left_us);
		sleep = ns_to_ktime(us * NSEC_PER_USEC);
		__set_current_state(TASK_KILLABLE);
		/* An eighth of slack lets the timer be batched with others. */
		schedule_hrtimeout_range(&sleep, us * NSEC_PER_USEC / 8,
					 HRTIMER_MODE_REL);
		pwt_read_dev(inode, d);
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
	u64 inflight_ms = READ_ONCE(pwt_inflight_ms.val);
	u64 max_chunk = READ_ONCE(pwt_write_chunk_pages.val);

	pwt_read_dev(inode, d);
	*limit = pwt_inflight_pages(d, inflight_ms, max_chunk);
	return pwt_dev_absorbed(d, written, inflight_ms, max_chunk);
}
