/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The prediction and the decision of pwthrottle, in plain C.
 *
 * Nothing here knows about the kernel: time is an abstract tick count that
 * wraps (jiffies in the module), memory is counted in pages. The same source
 * (module/predict.c) is compiled into the module and into the host unit
 * tests, which run it under ASan/UBSan.
 */
#ifndef _PWT_PREDICT_H
#define _PWT_PREDICT_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdbool.h>
#include <stdint.h>
#include <limits.h>
typedef unsigned long long u64;
typedef unsigned short u16;
#endif

/*
 * struct pwt_pred - one task's decaying count of the pages it dirtied
 * @future_dirty: pages the task is predicted to dirty in the near future
 * @last_decay: tick at which the current window started
 *
 * Every page the task dirties adds one to @future_dirty and every window
 * (dirty_ratio_centisecs) halves it. A task dirtying r pages per window
 * converges to future_dirty = r + r/2 + r/4 + ... = 2r: the prediction is
 * what the task would dirty over the next two windows at its recent rate.
 */
struct pwt_pred {
	u64 future_dirty;
	unsigned long last_decay;
};

/* Start a prediction at tick @now: a new task is predicted to dirty nothing. */
void pwt_pred_init(struct pwt_pred *p, unsigned long now);

/*
 * Halve @p once for every whole @window ticks elapsed since the window began,
 * then add @pages. @window == 0 means the feature is off: nothing changes.
 * Safe across tick wrap-around; a gap longer than half the tick range (a task
 * that slept for ~25 days on 32-bit jiffies) is treated as "long ago".
 */
void pwt_pred_account(struct pwt_pred *p, unsigned long now,
		      unsigned long window, u64 pages);

/*
 * Has the task not dirtied anything for at least one whole @window? Every
 * pwt_pred_account() leaves last_decay less than a window behind its @now,
 * so "now - last_decay >= 2 windows" means no pages accounted for over a
 * window (the module accounts them at its decisions). An
 * idle entry's prediction has at least halved; dropping it loses little.
 * With @window == 0 (pwthrottle off) every entry is idle.
 */
bool pwt_pred_idle(const struct pwt_pred *p, unsigned long now,
		   unsigned long window);

/*
 * The prediction a task is judged by: its own, or its group's when that is
 * larger and @writers (the group's tasks that have dirtied pages and not
 * exited or gone idle) are at least PWT_GROUP_MIN_WRITERS. Writers of one
 * group working at once (a threaded copier, xargs -P4 cp) are one writer;
 * writers that follow one another (a shell loop of dd's, the 2005
 * experiment's light writer) are judged one by one, as in 2005. A group's
 * prediction keeps the pages of members that have exited, so a loop of ten
 * 10 MB writers would otherwise be one 100 MB writer; by volume and rate a
 * sequential fork-per-file hog is no different from that loop, and is left
 * to the 2005 rule, task by task.
 */
#define PWT_GROUP_MIN_WRITERS 2
u64 pwt_judged_future(u64 own, u64 group, unsigned int writers);

/*
 * Pages per second the prediction corresponds to: future_dirty is about two
 * windows' worth, so rate = future / (2 * window) windows, in pages/s given
 * @hz ticks per second.
 */
u64 pwt_pred_rate(const struct pwt_pred *p, unsigned long window,
		  unsigned long hz);

/* The system-wide numbers a decision is made against, all in pages. */
struct pwt_global {
	u64 nr_dirty;		/* NR_FILE_DIRTY */
	u64 nr_writeback;	/* NR_WRITEBACK */
	u64 dirty_thresh;	/* the kernel's live vm.dirty_ratio/bytes limit */
	u64 bg_thresh;		/* vm.dirty_background_*: the flusher starts here */
	u64 freerun;		/* below it, dirty + writeback, no one is throttled */
};

/* Once over, a task stays over down to 1/PWT_RELEASE_DIV of the threshold. */
#define PWT_RELEASE_DIV 4

/*
 * Is the task whose prediction is @future_dirty a predicted over-dirtier, and
 * must it write back now?
 *
 * *@over is the verdict, kept by the caller between decisions: the dirty
 * memory the task is about to add would take the system over the dirty
 * threshold. Once over, a task stays over until the sum falls below a
 * quarter of the threshold. The prediction halves at each window boundary,
 * so a device-bound writer's prediction swings between one and two windows
 * of its rate, and right after a halving it may hold little dirty memory;
 * without the hysteresis such a writer drops out every window, dirties
 * memory at full speed while its device idles, and loses bandwidth. (Half
 * the threshold was measured too tight for a 20 MB/s disk and 1 GiB.)
 *
 * Returns true when the task is over and there is dirty memory it could
 * write. With none, no amount of writeback helps, and insisting is what
 * wedged the 2005 patch; the verdict is kept all the same, so a hog that
 * has just written everything does not start over from scratch.
 */
bool pwt_decide(const struct pwt_global *g, u64 future_dirty, bool *over);

/*
 * struct pwt_dev - the writer's device, as its bdi_writeback reports it
 * @bw: the kernel's smoothed estimate of its write bandwidth
 *      (avg_write_bandwidth), pages/s; 0 while it is not measured yet
 * @backlog: pages dirty or under writeback on it
 * @writeback: pages under writeback on it (part of @backlog)
 */
struct pwt_dev {
	u64 bw;
	u64 backlog;
	u64 writeback;
};

/*
 * A device "keeps up" while less than a second of its bandwidth waits on
 * it: the flusher writes what its writers dirty about as fast as they do.
 * The second is a choice, not a derivation: long enough for the backlog
 * of a fast device's flusher between two rounds, short enough that a
 * device holding more is clearly falling behind (make bench measures it).
 */
#define PWT_CONGESTED_MS 1000

/*
 * A device that writes all that waits on it within this time keeps up even
 * past the kernel's freerun ceiling: 200 ms is the longest pause the
 * kernel's own throttle imposes (MAX_PAUSE, mm/page-writeback.c), so its
 * pacing of other writers there is brief, while holding a copy to such a
 * device in forced writeback costs the copy (7.3, a disk written at
 * 600-700 MB/s: 88% of stock, held up to max_pause_ms while the flusher
 * kept the device full).
 */
#define PWT_FAST_DRAIN_MS 200

/* Pages @d writes in @ms milliseconds; 0 if its bandwidth is unknown. */
u64 pwt_dev_pages(const struct pwt_dev *d, u64 ms);

/*
 * Is the task a hog for its device: known bandwidth, more than
 * PWT_CONGESTED_MS of it dirty or under writeback there, and a prediction
 * (two windows of @window_ms) over what the device writes in that time?
 */
bool pwt_dev_hog(const struct pwt_dev *d, u64 future, u64 window_ms);

/*
 * Is what keeps the device full the task's own doing, so that after a wait
 * that ran out of time it is held again after a few pages, not a chunk
 * (see pwt_force_writeback())? Yes for a hog of its device
 * (pwt_dev_hog()), and for a task whose prediction alone would keep it
 * over (a quarter of the threshold, pwt_decide()'s release level): the
 * hogs of the memory rule. A light writer over only because others filled
 * memory (a loop device's worker, which we pass through) is not.
 */
bool pwt_hold_again(const struct pwt_global *g, const struct pwt_dev *d,
		    u64 future, u64 window_ms);

/*
 * pwt_decide() made device-aware:
 *  - a hog for its device (pwt_dev_hog()) is over at once, whatever the
 *    memory size, and stays over while it is one: on a large machine
 *    waiting for it to fill 20% of memory would queue gigabytes that
 *    every other writer's fsync then waits behind;
 *  - a task not yet over whose device keeps up (known bandwidth, and a
 *    backlog under PWT_CONGESTED_MS of it) is not an over-dirtier,
 *    however large its prediction, while dirty + writeback is below the
 *    kernel's freerun ceiling: a lone copy to a fast disk keeps the flusher and the device
 *    streaming, and no light writer is being throttled meanwhile. Above
 *    the ceiling the kernel starts pacing every writer, light ones too,
 *    and keeping them out of that is what pwthrottle is for; unless the
 *    device writes its whole backlog within PWT_FAST_DRAIN_MS, where that
 *    pacing is brief;
 *  - a task already over is let go by the same test only where its
 *    device writes the whole freerun budget within PWT_CONGESTED_MS:
 *    there memory, not the device, is what the task can fill, and
 *    holding it is only to keep dirty + writeback below the ceiling. A
 *    copy to a fast disk caught while a journal commit stalled the disk
 *    for a few hundred milliseconds goes free once the disk has caught
 *    up (7.3, a 1 GiB guest: held on, it wrote back in its own context
 *    at half its rate until pwt_kept_up() let it go, 67-81% of stock's
 *    bandwidth in five of six rounds). On a slower device a hog held at
 *    its rate also keeps up, but let go it would queue up to a second
 *    of the device's writing before being caught again, which every
 *    fsync there then waits behind: it keeps the 2005 hysteresis;
 *  - otherwise, and with the bandwidth not measured yet, the 2005 rule of
 *    pwt_decide(), with its hysteresis.
 * @window_ms is the prediction window: @future covers two of them.
 */
bool pwt_decide_dev(const struct pwt_global *g, const struct pwt_dev *d,
		    u64 future, u64 window_ms, bool *over);

/*
 * How an over-dirtier's writeback is sized, in pages, for a device that
 * writes @d->bw pages/s. At most @inflight_ms of its bandwidth under
 * writeback, so that another task's fsync, journal commit or truncate
 * waits behind no more than that: the task waits until half of it is left,
 * then queues two chunks of a quarter each when it has dirtied one more.
 * The device always has half the bound to write while the task dirties;
 * two chunks per chunk dirtied drain a backlog built before it was caught
 * (two folios per folio where a folio is larger: pwt_queue_pages()).
 * @max_chunk caps a chunk (write_chunk_pages). With the bandwidth unknown,
 * four chunks of @max_chunk (0.1.0's "wait for two chunks, queue two").
 */
#define PWT_CHUNKS_IN_FLIGHT 4
#define PWT_MIN_CHUNK 16	/* 64 KiB: smaller I/O costs more than it saves */
u64 pwt_inflight_pages(const struct pwt_dev *d, u64 inflight_ms, u64 max_chunk);
u64 pwt_chunk_pages(const struct pwt_dev *d, u64 inflight_ms, u64 max_chunk);
/*
 * Pages to queue at once: two chunks, or twice what the task's last write
 * dirtied (@last_write) when that is more than a chunk. Writeback goes by
 * whole folios, and kernels that give a 1 MiB write one 1 MiB folio (ext4
 * since 6.16) let a copy dirty more than a chunk between two of our calls:
 * two chunks then wrote one folio per folio dirtied, and a backlog built
 * before the copy was caught never drained (7.3, 20 MiB/s: 58 MB dirty for
 * as long as the copy ran, the 2005 loop beside it 2.2x slower than alone).
 * Such a writer's in-flight writeback is then up to three of its folios,
 * whatever inflight_ms says. While another process waits in fsync()
 * (@fsync_waits: sync_inflight_ms is the bound), one folio: the fsync and
 * its journal commit each wait for what is in flight, and two 1 MiB folios
 * are 100 ms of a 20 MiB/s stick, four times that bound. The backlog then
 * stays where it is, and drains once the fsyncs stop. @last_write counts
 * as at most PWT_MAX_FOLIO_PAGES: a larger count is not one folio.
 */
#define PWT_MAX_FOLIO_PAGES 512	/* 2 MiB: x86-64's largest page-cache folio */
u64 pwt_queue_pages(u64 chunk, u64 last_write, bool fsync_waits);

/*
 * Did the device absorb an over-dirtier's forced writeback as fast as it
 * was queued? The task queued @written pages, a chunk or more, and right
 * after a quarter of the bound (one chunk) or less is under writeback on
 * @d, and what waits there at all (dirty pages of every file included, so
 * a hog of many small files is not let go for the one it just wrote) is
 * half the bound or less, or written within PWT_FAST_DRAIN_MS: the backlog
 * below which pwt_decide_dev() would not have caught the task. Not only
 * half the bound: a fast disk's flusher keeps about a quarter second of it
 * dirty (trixie's 6.12, 280 MB/s: 60-70 MB), and a copy caught there after
 * a stall of the disk was held for 30 rounds, until it had written that
 * down to 14 MB; then the disk wrote at half its rate for 0.4 s while the
 * pool refilled to where the flusher works. Now 10 rounds, 0.1 s.
 */
bool pwt_dev_absorbed(const struct pwt_dev *d, u64 written, u64 inflight_ms,
		      u64 max_chunk);

/*
 * Count a forced writeback of @written pages that the device @d absorbed
 * (@absorbed) or not in *@run, the pages of the task's run of absorbed
 * ones in PWT_MIN_CHUNK units (16 bits, as the task's entry has no more
 * room: up to 4 GiB); true when they add up to PWT_KEPT_UP_MS of the
 * device's bandwidth, and the run starts again. Then the device keeps up
 * with the task, which is no over-dirtier of it. Never while the
 * bandwidth is not measured: that device is the 2005 rule's.
 *
 * Counted in pages, not in rounds or time: a device that idled (the writer
 * was stopped, or starved of CPU, or the device stalled) saves up a burst
 * of B ms of its rate (QEMU's throttle: 100; a USB stick's write cache,
 * then it slows down) and absorbs a writer R times as fast as it for
 * B/(R-1) ms, R*B/(R-1) ms of its bandwidth in all. A hog let go for one
 * round queued 19-38 MB on a 20 MiB/s stick before the device rule caught
 * it again, a second and more that every fsync there waits behind
 * (device.sh, 6.12: one in 150-300 rounds); let go after three rounds,
 * once in a make check (6.1: 38 MB); after 200 ms of rounds, once in a CI
 * run (trixie's 6.12: 39 MB; a copy stopped eight times for a second: the
 * run's 200 ms held a stop, or a hog short of CPU). 400 ms of the
 * bandwidth is four bursts: one covers only a writer under 4/3 of the
 * device's rate, a run across a stop (a burst saved before it, one after)
 * only one under twice it. A writer the device keeps up with writes in its
 * own context until it has written 400 ms of the device's bandwidth (for
 * longer than 400 ms if it is slower) before it is let go, once.
 */
#define PWT_KEPT_UP_MS 400
bool pwt_kept_up(u16 *run, const struct pwt_dev *d, u64 written, bool absorbed);

/*
 * The in-flight bound, in ms of the device's bandwidth, for an over-dirtier
 * whose device another task fsync()ed on at tick @seen (0: never): while
 * that was less than PWT_SYNC_RECENT_MS ago by @now (ticks of @hz per
 * second, wrapping), the smaller of @inflight_ms and @sync_ms, else
 * @inflight_ms; @sync_ms 0 is off. An fsync, and the journal commit it
 * starts, waits for what the over-dirtier has queued on the device: the
 * fsync's page, the journal's writes and its commit block each queue
 * behind it (traced; the commit does not wait for the over-dirtier's data,
 * which ext4 writes as unwritten extents), about 1.5 times the bound each; with 100
 * ms that was 7.6-15x an fsync's time alone on a 20-40 MiB/s disk that
 * answers at once, 12-18 ms here, and with 25 ms 1.2-5.5x (bench/results).
 * But on a device with latency the smaller bound costs the over-dirtier
 * bandwidth (20 ms per write: half its rate at 25 ms), so it is kept only
 * while someone waits, as the block layer's writeback throttling deepens
 * background writeback only while no read waits. A second covers the gaps
 * of an fsync loop (the 2005 loop's light writer fsyncs every file, a
 * database at every commit) and keeps the bound from flapping within one.
 */
#define PWT_SYNC_RECENT_MS 1000
u64 pwt_bound_ms(u64 inflight_ms, u64 sync_ms, unsigned long seen,
		 unsigned long now, unsigned long hz);

/*
 * Ticks left of @ms from @seen, when another process last entered an fsync
 * on the over-dirtier's device (jiffies | 1; 0: none yet); 0 once that is
 * past, or with @ms 0. pwt_bound_ms() keeps the smaller bound while a
 * second (PWT_SYNC_RECENT_MS) is left; the over-dirtier holds its
 * writeback back while sync_hold_ms is: queued after the fsync's own page,
 * it would be ahead of the journal writes the fsync waits for next.
 */
unsigned long pwt_sync_ticks_left(u64 ms, unsigned long seen,
				  unsigned long now, unsigned long hz);

/*
 * Microseconds until @d has written @excess pages at its bandwidth: how
 * long to sleep before looking again, clamped to [@min_us, @max_us].
 */
u64 pwt_drain_us(const struct pwt_dev *d, u64 excess, u64 min_us, u64 max_us);

/*
 * The kernel's global dirty threshold (mm/page-writeback.c,
 * domain_dirty_limits()), rebuilt from its inputs so the module never has to
 * call an unexported function:
 *   @dirtyable: free pages above the reserves plus file LRU pages
 *   @ratio:     vm.dirty_ratio (percent), used when @bytes is 0
 *   @bytes:     vm.dirty_bytes
 *   @page_size: bytes per page
 */
u64 pwt_dirty_thresh(u64 dirtyable, unsigned int ratio, u64 bytes,
		     unsigned int page_size);

/*
 * domain_dirty_limits()' background threshold: @bg_thresh as configured,
 * half of @thresh if it is at or above @thresh.
 */
u64 pwt_bg_thresh(u64 thresh, u64 bg_thresh);

/*
 * dirty_freerun_ceiling(): halfway between the background threshold (as
 * pwt_bg_thresh() makes it) and the dirty threshold, the point below which
 * balance_dirty_pages() lets every writer run.
 */
u64 pwt_freerun(u64 thresh, u64 bg_thresh);

/*
 * Whole pages dirtied between two readings, @seen then @now, of a task's
 * bytes written (ioac.write_bytes, which only grows): 0 unless @now is
 * past @seen. A part page stays in @seen for the next reading.
 */
u64 pwt_dirtied_pages(u64 seen, u64 now, unsigned int page_shift);

/*
 * Where a new entry starts counting a task's bytes written @now: the
 * @nr_dirtied pages the kernel has counted since it last balanced the task
 * (current->nr_dirtied) count, what it wrote before does not. Never below 0.
 */
u64 pwt_count_from(u64 now, int nr_dirtied, unsigned int page_shift);

/*
 * What a throttle decision comes to for the caller, once a chunk is due:
 * where writeback from its context is not safe (pwt_may_writeback(): a
 * journal handle, NOFS/NOIO, a shared writable mapping, mmap_lock held,
 * ...) nothing, the stock throttle paces it (SKIP), whether or not the
 * caller may sleep; else a caller that must not sleep (BDP_ASYNC, io_uring
 * NOWAIT) is told -EAGAIN and retries from io-wq (EAGAIN), and any other
 * writes back (WRITEBACK). In that order: -EAGAIN only where a caller that
 * may sleep would have been held.
 */
enum pwt_act {
	PWT_ACT_SKIP,
	PWT_ACT_EAGAIN,
	PWT_ACT_WRITEBACK,
};

enum pwt_act pwt_act(bool may_writeback, bool async);

/*
 * The most entries one chain of the task table holds. The table is keyed
 * by pid, which a user can choose (ns_last_pid, or forking until a pid
 * comes up), so without a bound of its own one chain could hold the whole
 * table, walked with a raw spinlock held (a preempt-off section on
 * PREEMPT_RT) at every new entry and every sweep. 64 a chain is max_tasks'
 * largest value spread evenly over the 1024 chains; at the default 4096
 * (4 a chain) only a chosen set of pids reaches it.
 */
#define PWT_CHAIN_MAX 64

/*
 * How many entries a new one's chain must give up (idle ones, evicted)
 * before the new one goes in: enough that the table, @nr_tasks of
 * @max_tasks, and the chain, @chain_len of PWT_CHAIN_MAX, both have room
 * for it. Evicting from that chain frees room in both at once.
 */
u64 pwt_evict_want(u64 nr_tasks, u64 max_tasks, u64 chain_len);

#endif /* _PWT_PREDICT_H */
