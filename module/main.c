// SPDX-License-Identifier: GPL-2.0
/*
 * pwthrottle: per-task predictive write throttling, as a module.
 *
 * The stock kernel throttles dirtiers only when the system as a whole is
 * close to its dirty limit, and then it paces every dirtier on the device
 * alike. One write hog (cp, untar, rsync to a USB stick) therefore fills the
 * dirty budget and every other writer, however small, is paced with it: the
 * "USB-stick stall". A 10 MB write that should take milliseconds takes
 * seconds.
 *
 * Andrea Arcangeli's 2005 idea (per-task-predictive-write-throttling-1) is to
 * make the test "too many dirty pages?" per task and forward-looking:
 *
 *   nr_dirty + nr_writeback + future_dirty(task) > dirty_thresh
 *
 * where future_dirty is a decaying count of the pages the task dirtied: +1
 * per page, halved every dirty_ratio_centisecs (default 5 s). At a steady r
 * pages per window it converges to 2r, what the task will dirty over the
 * next two windows if it keeps going. A hog's prediction alone exceeds the
 * threshold, so it is caught before it has filled memory; a task that writes
 * 10 MB now and then has a small prediction and passes. Once over, a task
 * stays over until the sum falls below a quarter of the threshold (see
 * pwt_decide()).
 *
 * Writers that are not one task: a threaded copier, io_uring with its io-wq
 * workers, "xargs -P4 cp", make -j. Each of their tasks dirties a share of
 * the rate, so no single prediction catches them until the dirty budget is
 * full, and then every writer is "over". So each task's pages are also
 * added to a prediction of its group (a struct pwt_group, at each
 * decision), and while two or more of the group's tasks are writers
 * (have dirtied pages, not exited, not evicted as idle: task.c) a task is
 * judged by the larger of the two (pwt_judged_future()). The group is
 * what group_by says: by default the process (its threads); 2 the process
 * group, i.e. a shell job, which also catches a job that starts a process
 * per file, several at once; 0 is the 2005 behaviour. Writers that
 * follow one another are judged one by one: a group's prediction keeps
 * the pages of members that have exited, so a shell loop of short
 * writers (the 2005 experiment's own light writer, ten dd's of 10 MB)
 * would be one 100 MB writer, a hog on a small machine (make bench,
 * group_by=2 without this rule: the loop alone went from 0.53 s to 1.55 s
 * on 40 MiB/s). Not 2 by default all the same: the programs a script
 * starts side by side, each light, would be judged as one writer.
 *
 * The device decides first (device.c, pwt_decide_dev()). The 2005 rule
 * knows memory, not devices: a lone copy to a fast disk has a prediction
 * far over the threshold although its disk writes everything it dirties,
 * and on a large machine a copy to a USB stick is caught only once it has
 * queued gigabytes. So a writer whose device keeps up (less than a second
 * of its measured bandwidth dirty or under writeback on it) is no
 * over-dirtier, whatever its prediction, while the system's dirty and
 * writeback pages stay below the kernel's freerun ceiling (halfway from
 * the background to the dirty threshold): below it balance_dirty_pages()
 * paces no one, above it every writer, light ones too, which is what we
 * are here to prevent; past it only if the device writes everything
 * queued on it within 200 ms, the kernel's longest pause, so that its
 * pacing is brief (pwt_decide_dev()). The same test lets an over-dirtier
 * go where its device writes the whole freerun budget within that second:
 * there it was caught only for memory (a copy to a fast disk whose journal
 * commit stalled the disk), and held on it would write back in its own
 * context, at half its rate, until it proved it kept up. And a writer
 * predicted to dirty more than its congested device can write over the
 * same two windows is one at once, whatever the memory size. Other cases,
 * and a device whose bandwidth the kernel has not measured yet, are the
 * 2005 rule's.
 *
 * A predicted over-dirtier pays for what it dirties by writing back, in its
 * own context: every chunk it dirties, it starts writeback of two chunks of
 * the file it is writing (two, so a backlog built up before the prediction
 * caught up drains; twice its last write where that dirtied more, a large
 * folio, which writeback takes whole: pwt_queue_pages()), waiting before
 * and after, killably and for at most max_pause_ms, until its device has no
 * more than half of inflight_ms (100 ms) of its bandwidth under writeback.
 * A chunk is a quarter of that bound (at most write_chunk_pages): the
 * device always has 50 ms to write while the task dirties the next chunk,
 * so it loses no bandwidth, and another task's fsync, journal commit or
 * truncate queues behind at most 100 ms of the hog's I/O, on a 20 MiB/s
 * stick as on an NVMe disk (or three of its folios, where they are larger:
 * a 1 MiB folio is 50 ms of such a stick). For a second after another
 * process fsync()ed on the device (device.c notes each one through a
 * kprobe), the bound is sync_inflight_ms (25 ms) instead, and a task
 * whose folios are larger than a chunk queues one, not two: that
 * fsync's page and its journal commit's writes each queue behind what the
 * over-dirtier has in flight (traced: the commit does not wait for its
 * data, which ext4 writes as unwritten extents), and behind 100 ms twenty
 * of them took 7.6-15 times as long as alone (make bench). A smaller
 * bound all the time would cost the copy bandwidth on a device that
 * completes its writes late (20 ms: half its rate at 25), so it holds
 * only while someone waits, as the block layer's writeback throttling
 * cuts background writes only while reads wait. And it queues nothing
 * more until sync_hold_ms (100 ms) after that process entered its fsync,
 * waiting at most as long in one forced writeback, so that a stream of
 * fsyncs slows the copy but cannot stop it: the fsync's page then waits
 * behind what is already in flight, its journal's writes behind nothing
 * more of ours. Where one folio is 50 ms of the device (7.3's 1 MiB
 * folios on a 20 MiB/s disk) the bound alone still left each of those
 * trips behind one: twenty fsyncs 7x their time alone, 1.1x with the
 * hold; 1.0-1.8x on every kernel, with the copy writing a quarter to
 * half of its rate meanwhile (make bench). The over-dirtier's own fsyncs
 * do not count. The wait before queueing makes several over-dirtiers of
 * one device (a threaded copier) take turns within the bound instead of
 * stacking on it. (In its own context rather than by
 * leaving the pages to the flusher: the flusher starts only at the
 * background threshold and writes whatever is oldest, so the hog's
 * footprint would grow to that threshold, which is what we are avoiding.)
 * If the device has absorbed our two chunks at once (a quarter of the
 * bound or less under writeback right after, and no more waiting on it
 * than it writes in 200 ms, where the device rule would not have caught
 * the task) every time until it has taken 400 ms of its bandwidth so, it
 * keeps up with this writer: the task stops being over. (Once, a few
 * times, or for 200 ms is luck: a device that idled, while the writer was
 * stopped or short of CPU or the device stalled, takes a burst at once
 * afterwards; a hog outruns four of them.)
 * If the waits run out of time with the device still full, a task whose
 * own dirtying fills it (a hog of its device, or a prediction of a quarter
 * of the threshold) queues nothing and is held again after its next 8
 * pages, as balance_dirty_pages() pauses again and again; a light writer
 * over only because others filled memory is held again only after its
 * next chunk. The dirty budget stays free for light writers, which run at
 * memory speed. Without dirty memory to write, nobody is throttled: the
 * "!nr_reclaimable" escape that kept 2005's version from wedging lone
 * writers.
 *
 * Where pwthrottle sits: every caller that dirties page cache calls
 * balance_dirty_pages_ratelimited_flags() (balance_dirty_pages_ratelimited()
 * is a tail jump into it). An ftrace ops with IPMODIFY on its entry sends
 * every call that may decide (see the costs below) to
 * pwt_balance_dirty_pages(), which accounts, maybe throttles, and then
 * calls the original so the stock throttle still applies after ours. It
 * enters the original past the ftrace site (pwt_call_original), so
 * the call is not redirected again. On a kernel whose prologue is not the
 * one pwt_call_original expects (or with direct_jump=0), it calls the
 * original's entry instead, and the ftrace callback lets calls that return
 * into our text through: correct everywhere, about twice the cost.
 *
 * Counting: the task's bytes written (ioac.write_bytes) grow by a folio's
 * size on every clean to dirty transition, as current->nr_dirtied does,
 * and are never reset (nr_dirtied is, inside the original, on calls we may
 * not see), so the difference between two readings is exactly the pages
 * dirtied in between, large folios included. They also count what the
 * task wrote O_DIRECT (pwt_written_bytes()). A new entry counts from the
 * kernel's nr_dirtied, not from the task's birth.
 *
 * Costs on the hot path: most calls can decide nothing, since a task
 * decides every ratelimit_pages pages (8 once over), and the ftrace
 * callback lets them through without a redirect: it compares the task's
 * bytes written with a per-CPU gate that the last redirected call opened
 * (struct pwt_gate). The others are redirected to the wrapper: an SRCU
 * read lock, an RCU hash lookup by pid, the page count on the task's own
 * entry and, when due, a decision: the pages go into the prediction, the
 * group's lock is taken, four vmstat counters, the device's bandwidth and
 * two per-CPU counters are read. (make bench, test/guest/overhead.sh:
 * 100-140 instructions per 4 KiB write on 6.1 to 7.3, 1.14-1.48 times
 * what any redirecting ftrace hook of the function costs; 2.65 times
 * when every call was redirected.) No cacheline all writers share is
 * written: statistics and the gate are per CPU, and a group's lock and
 * prediction are shared by its own tasks only. The trace events of
 * include/pwt_trace.h (pwthrottle:pwt_decision at each decision,
 * pwthrottle:pwt_throttle after each forced writeback) are a static branch
 * each while disabled.
 *
 * Where pwthrottle stays out of the way (pass straight through):
 * dirty_ratio_centisecs == 0 (the switch to 0 also empties the table, so
 * what tasks write while off is never charged to them: knobs.c); kernel
 * threads, which write for others (the loop worker for the filesystem on
 * it, nfsd and ksmbd for all their clients: the kernel does not tell us
 * for whom, so the stock throttle paces them); real-time and deadline
 * tasks, which must not do writeback I/O in their own context (the kernel
 * gives them a quarter more room);
 * BDP_ASYNC callers (io_uring NOWAIT) are never made to sleep, they get
 * -EAGAIN when they would have been throttled and retry from io-wq, whose
 * workers share their group; tasks holding a journal handle or running
 * with NOFS/NOIO/LOCAL_THROTTLE; exiting tasks; inodes that are not
 * regular files or whose bdi does not write back; filesystems without a
 * block device of their own (NFS, FUSE, ...) and cluster filesystems; page
 * faults that may hold mmap_lock, and files mapped shared and writable
 * (writeback forced from a fault can clean the folio the store waits for);
 * re-entry from our own writeback.
 *
 * What the decision does not model, on purpose: memcg dirty limits and the
 * per-bdi min_ratio/max_ratio/strict_limit an admin sets. The stock
 * throttle, which runs after ours on every call, enforces them as before;
 * pwthrottle only adds a predicted over-dirtier's writeback on top, judged
 * against the global threshold.
 *
 * The table: one entry per writing thread (at most max_tasks, and at most
 * PWT_CHAIN_MAX in one chain of its hash, whatever pids a user picks),
 * freed when the thread exits. When the table or the new entry's chain is
 * full, idle entries of that chain (threads that wrote nothing for a whole
 * window) make room, and when it is over half full the periodic sweep
 * evicts idle ones everywhere, so idle threads keep a new hog out for at
 * most one sweep (10 s; debugfs "drops" counts the writers left out).
 *
 * Errors: writeback errors are recorded in the mapping by the filesystem and
 * we never clear them (no filemap_check_errors(), no fdatawait that
 * consumes), so the application's fsync() still sees them.
 */
#include <linux/module.h>
#include <linux/ftrace.h>
#include <linux/writeback.h>
#include <linux/backing-dev.h>
#include <linux/pagemap.h>
#include <linux/srcu.h>
#include <linux/sched/signal.h>
#include <linux/sched/mm.h>
#include <linux/sched/prio.h>
#include <linux/mmap_lock.h>
#include <linux/ktime.h>
#include <linux/fs.h>
#include "pwt_compat.h"
#include "pwthrottle.h"

#define CREATE_TRACE_POINTS
#include "pwt_trace.h"

/* Decide every 8 pages once over, like the stock dirty_exceeded ratelimit. */
#define PWT_OVER_RATELIMIT 8

DEFINE_SRCU(pwt_srcu);
DEFINE_SRCU(pwt_task_srcu);
bool pwt_unloading;

/*
 * How the wrapper calls the original: a jump past its ftrace site, or a
 * call through its entry that the ftrace callback recognises and lets
 * through. The parameter can only ask for the second (a fallback to try
 * if the first misbehaves, and how the tests run that path); the prologue
 * check can also choose it. Fixed once the hook is live.
 */
static bool pwt_direct_jump = true;
module_param_named(direct_jump, pwt_direct_jump, bool, 0444);
MODULE_PARM_DESC(direct_jump,
		 "Enter the hooked function past its ftrace site (1, default, if its prologue is as expected) or through its entry (0: slower)");

/* Is it safe to start and wait for writeback of @mapping from here? */
static bool pwt_may_writeback(struct address_space *mapping)
{
	struct inode *inode = mapping->host;
	struct mm_struct *mm = current->mm;
	const char *fs;

	/* A transaction is open: writeback would nest a second one. */
	if (current->journal_info)
		return false;
	/* The caller forbids I/O or recursion into the fs (loop, nfsd). */
	if (current->flags & (PF_MEMALLOC_NOFS | PF_MEMALLOC_NOIO | PF_LOCAL_THROTTLE))
		return false;
	/* btrfs' btree inode, block devices: not ours to write. */
	if (!inode || !S_ISREG(inode->i_mode) || !mapping_can_writeback(mapping))
		return false;
	/*
	 * Only local block filesystems: on NFS/FUSE/CIFS the server may be the
	 * writer or may hang; cluster filesystems hold cross-node locks here.
	 */
	if (!(inode->i_sb->s_type->fs_flags & FS_REQUIRES_DEV))
		return false;
	fs = inode->i_sb->s_type->name;
	if (!strcmp(fs, "gfs2") || !strcmp(fs, "ocfs2"))
		return false;
	/*
	 * A write fault may reach us with mmap_lock (read) still held. We
	 * cannot tell whose hold it is, so any holder means "not now": the
	 * next decision will catch the task in a write() instead.
	 */
	if (mm && rwsem_is_locked(&mm->mmap_lock))
		return false;
	/*
	 * A shared writable mapping of the file: writeback write-protects the
	 * pages it cleans (page_mkclean), and a store through the mapping
	 * faults them dirty again, back into this hook. Where a fault holds a
	 * per-VMA lock and no mmap_lock (6.4+), writeback forced from the fault
	 * cleaned the large folio the store was about to write, and the store
	 * faulted again: an mmap writer on XFS made no progress in 240 s,
	 * 2.4 million pages written back (7.3, torture nofs_xfs). Such files
	 * are left to the stock throttle.
	 */
	if (mapping_writably_mapped(mapping))
		return false;
	return true;
}

/*
 * @fsync_waits: the bound @chunk was sized by is sync_inflight_ms (another
 * process fsynced on the device within the second), looked up once by the
 * caller for both.
 */
static void pwt_force_writeback(struct pwt_task *t, struct address_space *mapping,
				u64 future, long chunk, bool fsync_waits,
				u64 last_write, bool hog)
{
	struct writeback_control wbc = {
		.sync_mode	= WB_SYNC_NONE,
		.range_cyclic	= 1,
		.range_start	= 0,
		.range_end	= LLONG_MAX,
	};
	ktime_t t0 = ktime_get();
	ktime_t deadline = ktime_add_ms(t0, READ_ONCE(pwt_max_pause_ms.val));
	ktime_t hold_end = 0;
	enum pwt_wait_end end;
	struct pwt_dev d;
	long queued, written = 0;
	u64 held, limit;
	bool absorbed;

	/* Once per forced writeback; its waits look again each round. */
	if (fsync_waits)
		pwt_stat_add(sync_bounded, 1);
	/* Busy entries are never evicted (pwt_task_idle()). */
	WRITE_ONCE(t->busy, true);
	/* Within max_pause_ms: a hold that ran out of it would queue nothing. */
	if (fsync_waits)
		hold_end = min(ktime_add_ms(t0, READ_ONCE(pwt_sync_hold_ms.val)),
			       deadline);
	end = pwt_wait_device(mapping->host, future, deadline, hold_end, &d,
			      &limit);
	/*
	 * Room: queue. Killed or unloading: go, at once. No longer over: the
	 * flusher writes its pages. Out of time with the device still full
	 * (the flusher's writeback of a backlog, another writer's): queueing
	 * more would only lengthen the queue other tasks' fsync waits behind.
	 */
	if (end == PWT_WAIT_DONE) {
		/*
		 * The return value is deliberately unused: an I/O error is
		 * recorded in the mapping (mapping_set_error()) for the
		 * application's fsync() to report, and nothing here consumes it.
		 */
		queued = pwt_queue_pages(chunk, last_write, fsync_waits);
		wbc.nr_to_write = queued;
		pwt_fdatawrite_wbc(mapping, &wbc);
		written = max(queued - wbc.nr_to_write, 0L);
		/*
		 * The device took what we queued without a queue building
		 * up, every time until PWT_KEPT_UP_MS of its bandwidth: it
		 * keeps up with this writer, which is no over-dirtier of it.
		 * (It is caught again if its device congests; see
		 * pwt_decide_dev().) Else wait; at once done if it absorbed
		 * this round.
		 */
		absorbed = pwt_dev_absorbed_now(mapping->host, written, &d,
						&limit);
		if (pwt_kept_up(&t->kept_up_run, &d, written, absorbed)) {
			end = PWT_WAIT_KEPT_UP;
			WRITE_ONCE(t->over, false);
		} else {
			end = pwt_wait_device(mapping->host, future, deadline,
					      0, &d, &limit);
		}
	} else {
		/* The device was full: no round absorbed. */
		t->kept_up_run = 0;
	}
	WRITE_ONCE(t->busy, false);
	held = ktime_to_ns(ktime_sub(ktime_get(), t0));

	/*
	 * Out of time (max_pause_ms) with the device still full, and @hog,
	 * the task's own dirtying fills it (pwt_hold_again()): held again
	 * after its next few pages (PWT_OVER_RATELIMIT), not after a whole
	 * chunk. Like balance_dirty_pages(), which pauses again and again, so
	 * the hog dirties no faster than the device drains until there is
	 * room; a backlog it built before it was caught drains at the
	 * device's full speed, not half of it. A light writer over only
	 * because a writer we pass through (a loop device's worker) filled
	 * memory waits for a backlog not its own; held again every few pages,
	 * it took 11 s for 10 MB where stock takes 1-2 s (6.12).
	 */
	if (end != PWT_WAIT_DEADLINE || !hog)
		t->since_writeback = 0;
	WRITE_ONCE(t->throttles, t->throttles + 1);
	WRITE_ONCE(t->forced_pages, t->forced_pages + written);
	WRITE_ONCE(t->throttled_ns, t->throttled_ns + held);
	pwt_stat_add(throttles, 1);
	pwt_stat_add(forced_pages, written);
	trace_pwt_throttle(written, held, end, &d, limit);
}

/*
 * The gate: per CPU, whose calls the ftrace callback sends straight on to
 * the original, unredirected, and until when. A task's calls between two
 * decisions can decide nothing (it has dirtied fewer than ratelimit pages
 * since the last one), so the callback lets them through while the task's
 * bytes written (ioac.write_bytes, which the kernel adds to as it dirties)
 * are within @span of @from. A task's first call on a CPU, or after another
 * task's there, is redirected and opens the gate again; a thread that
 * writes for a whole time slice pays for the lookup once per slice. Only a
 * hint: the wrapper counts from the task's own entry, so a call let through
 * loses no page, and @task is compared, never dereferenced (a new task at
 * a freed one's address starts at 0 bytes, below any @from but 0, where
 * its first decision is not due yet anyway). Written with preemption off
 * (pwt_gate_open()), read in the callback, where ftrace has turned it off
 * (FTRACE_OPS_FL_RECURSION): never torn on its CPU.
 */
struct pwt_gate {
	const struct task_struct *task;
	u64 from;	/* its bytes written when the gate opened, or counted */
	u64 span;	/* bytes it may dirty from there before a call is ours */
};

static DEFINE_PER_CPU(struct pwt_gate, pwt_gate);

/* Let current's calls through until it has dirtied @pages past @from. */
static void pwt_gate_open(u64 from, unsigned int pages)
{
	struct pwt_gate *gate = get_cpu_ptr(&pwt_gate);

	gate->task = current;
	gate->from = from;
	gate->span = (u64)pages << PAGE_SHIFT;
	put_cpu_ptr(&pwt_gate);
}

/* Pages a task dirties between decisions: fewer once it is over. */
static unsigned int pwt_task_ratelimit(const struct pwt_task *t)
{
	return t->over ? PWT_OVER_RATELIMIT : READ_ONCE(pwt_ratelimit_pages.val);
}

/*
 * Account the pages current dirtied since its last decision and, every
 * ratelimit pages, decide. Returns 0 to go on to the stock throttle, or
 * -EAGAIN for a BDP_ASYNC caller we would have made to wait. Every return
 * but a re-entry opens the gate for the calls that cannot decide anything.
 */
static int pwt_throttle(struct address_space *mapping, unsigned int flags)
{
	struct task_struct *tsk = current;
	u64 written = pwt_written_bytes(tsk);
	struct pwt_global g;
	struct pwt_dev d;
	struct pwt_task *t;
	unsigned int limit, writers;
	bool over, throttle, fsync_waits;
	u64 dirtied, future, window_ms, bound_ms;
	long chunk;
	int ret = 0;

	pwt_stat_add(calls, 1);
	/*
	 * Kernel threads write for others (the loop device's worker for every
	 * writer of the filesystem on it, nfsd and ksmbd for their clients):
	 * their rate predicts no one writer, and the stock throttle paces
	 * them. Real-time and deadline tasks (prio below MAX_RT_PRIO, as the
	 * kernel's rt_task() long meant) must not be made to do writeback I/O
	 * in their own context: the kernel lets them exceed its limit by a
	 * quarter, and we leave them to it. Looked at again every
	 * ratelimit_pages: a task can change its policy.
	 */
	if (tsk->flags & (PF_EXITING | PF_KTHREAD) || tsk->prio < MAX_RT_PRIO) {
		pwt_gate_open(written, READ_ONCE(pwt_ratelimit_pages.val));
		return 0;
	}
	/*
	 * tmpfs, ramfs, no host inode: the original returns at once for a bdi
	 * that does not write back, and such pages are not counted. A decision
	 * here would judge the task against a device that is not there (a hog
	 * printing its summary to a tmpfs file). Its calls go through until it
	 * dirties a page that counts; that call decides, with every page.
	 */
	if (!mapping->host || !mapping_can_writeback(mapping)) {
		pwt_gate_open(written, 1);
		return 0;
	}
	t = pwt_task_get();
	if (!t) {
		pwt_gate_open(written, READ_ONCE(pwt_ratelimit_pages.val));
		return 0;
	}
	/* Our own forced writeback: no decision inside one. */
	if (t->busy)
		return 0;

	limit = pwt_task_ratelimit(t);
	dirtied = pwt_dirtied_pages(t->written_seen, written, PAGE_SHIFT);
	if (dirtied < limit)
		goto out;
	t->written_seen += dirtied << PAGE_SHIFT;
	dirtied = min_t(u64, dirtied, UINT_MAX);
	pwt_stat_add(checks, 1);
	pwt_pred_account(&t->pred, jiffies, pwt_window(), dirtied);
	t->since_writeback = min_t(u64, (u64)t->since_writeback + dirtied, UINT_MAX);

	/* Writers of a group at work together: by what the group will dirty. */
	future = pwt_group_account(t, dirtied, &writers);
	future = pwt_judged_future(t->pred.future_dirty, future, writers);
	pwt_read_global(&g);
	pwt_read_dev(mapping->host, &d);
	over = t->over;
	window_ms = READ_ONCE(pwt_ratio_centisecs) * 10;
	throttle = pwt_decide_dev(&g, &d, future, window_ms, &over);
	WRITE_ONCE(t->over, over);
	/* A run of absorbed rounds lasts while over: a new verdict starts anew. */
	if (!over)
		t->kept_up_run = 0;
	trace_pwt_decision(future, dirtied, &g, &d, over, throttle);
	if (!throttle)
		goto out;
	/* Only now: the bound looks up the device's fsync slot. */
	bound_ms = pwt_inode_bound_ms(mapping->host, &fsync_waits);
	chunk = pwt_chunk_pages(&d, bound_ms, READ_ONCE(pwt_write_chunk_pages.val));
	if (t->since_writeback < chunk)
		goto out;
	switch (pwt_act(pwt_may_writeback(mapping), flags & BDP_ASYNC)) {
	case PWT_ACT_SKIP:
		pwt_stat_add(skipped, 1);
		goto out;
	case PWT_ACT_EAGAIN:
		pwt_stat_add(async_eagain, 1);
		ret = -EAGAIN;
		goto out;
	case PWT_ACT_WRITEBACK:
		break;
	}
	/*
	 * What it dirtied since its last decision stands for its last write:
	 * once over, that is the last 8 pages, or the one large folio that
	 * took it past them (pwt_queue_pages()).
	 */
	pwt_force_writeback(t, mapping, future, chunk,
			    fsync_waits, dirtied,
			    pwt_hold_again(&g, &d, future, window_ms));
out:
	/* On the CPU it is on now, after the wait: as it stands now. */
	pwt_gate_open(t->written_seen, pwt_task_ratelimit(t));
	return ret;
}

/*
 * The original, minus its ftrace site: a direct jump past the fentry call
 * into the body. Calling the function's entry instead would go through
 * ftrace's trampoline a second time, and through our callback, which then
 * has to recognise the call as ours; that second pass was half of the
 * hook's cost per call (6.12: 547 instructions per 4 KiB write, 277
 * without it; make bench). A direct jump needs no ENDBR on IBT kernels
 * (an indirect one would: the body is not a valid indirect target).
 * pwt_prologue_expected() verifies the layout before the hook goes live.
 */
int pwt_call_original(struct address_space *mapping, unsigned int flags);
PWT_BODY_JUMP(pwt_call_original, "");

/*
 * Where every call to balance_dirty_pages_ratelimited_flags() lands. Runs
 * in the dirtier's context, sleepable unless BDP_ASYNC, with i_rwsem and
 * sb freeze protection typically held (see pwt_may_writeback()).
 *
 * The SRCU read section of pwt_srcu is what rmmod waits for. It must also
 * enclose the call to the original, whose return address is in our text
 * while it sleeps in balance_dirty_pages(); the unlock after the call keeps
 * the compiler from making it a tail jump. That sleep has no bound: a
 * writer of a hung FUSE daemon's or NFS server's files, or of a suspended
 * device, loops there for as long as the device stays away. So the task
 * entries do not wait for pwt_srcu: pwt_task_srcu covers only
 * pwt_throttle(), where the entry is used, whose waits end within
 * max_pause_ms (task.c frees evicted entries after it). Only the
 * writeback it starts can block longer, on a device that stops answering
 * (a request queue that stays full, a bitmap the filesystem must read
 * first), as every writer's own writeback would there.
 */
static int pwt_balance_dirty_pages(struct address_space *mapping,
				   unsigned int flags)
{
	int idx, tidx, ret = 0;

	idx = srcu_read_lock(&pwt_srcu);
	if (READ_ONCE(pwt_ratio_centisecs) && !READ_ONCE(pwt_unloading)) {
		tidx = srcu_read_lock(&pwt_task_srcu);
		ret = pwt_throttle(mapping, flags);
		srcu_read_unlock(&pwt_task_srcu, tidx);
	}
	if (!ret)
		ret = likely(pwt_direct_jump) ? pwt_call_original(mapping, flags) :
		      balance_dirty_pages_ratelimited_flags(mapping, flags);
	srcu_read_unlock(&pwt_srcu, idx);
	return ret;
}

/*
 * The ftrace callback: atomic, so it only redirects. Our own wrapper
 * enters the original past this site (pwt_call_original), or, without the
 * direct jump, through it: then the call returns into our text, and goes
 * on to the original. The code after that call in the wrapper keeps it
 * from being a tail jump, whose return address would be our caller's.
 */
static void notrace pwt_ftrace_thunk(unsigned long ip, unsigned long parent_ip,
				     struct ftrace_ops *ops, struct ftrace_regs *fregs)
{
	const struct pwt_gate *gate = this_cpu_ptr(&pwt_gate);
	struct task_struct *tsk = current;

	if (unlikely(!pwt_direct_jump) && within_module(parent_ip, THIS_MODULE))
		return;
	/* Off: pure pass-through, nothing counted. */
	if (!READ_ONCE(pwt_ratio_centisecs))
		return;
	/* No decision can be due: on to the original, and count the call. */
	if (gate->task == tsk && pwt_written_bytes(tsk) - gate->from < gate->span) {
		pwt_stat_add(calls, 1);
		return;
	}
	pwt_ftrace_set_ip(fregs, (unsigned long)pwt_balance_dirty_pages);
}

/*
 * pwt_call_original jumps to a fixed offset: check that the function
 * starts as the compiler lays out a traced function on this kernel. On IBT
 * kernels that is ENDBR64 (or its sealed form) first; then, on all, the
 * fentry site: a 5-byte NOP, or a call when another tracer is attached.
 * Anything else, and the wrapper calls the function's entry instead.
 */
static bool __init pwt_prologue_expected(void)
{
	static const u8 nop5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	const u8 *p = (const u8 *)balance_dirty_pages_ratelimited_flags;
	const u8 *site = p + PWT_BODY_OFFSET - MCOUNT_INSN_SIZE;

	if (pwt_entry_is_endbr(p) && (!memcmp(site, nop5, sizeof(nop5)) || site[0] == 0xe8))
		return true;
	pr_warn("balance_dirty_pages_ratelimited_flags does not start as expected (%*ph): calling it through its entry (slower)\n",
		PWT_BODY_OFFSET, p);
	return false;
}

/*
 * IPMODIFY: we change where the function goes; only one such user per
 * function. PERMANENT: "sysctl kernel.ftrace_enabled=0" would otherwise
 * silently disable us; with it, that sysctl fails while we are loaded.
 */
static struct ftrace_ops pwt_ftrace_ops = {
	.func	= pwt_ftrace_thunk,
	.flags	= FTRACE_OPS_FL_IPMODIFY | FTRACE_OPS_FL_RECURSION |
		  FTRACE_OPS_FL_PERMANENT,
};

static int __init pwt_hook_init(void)
{
	int ret;

	if (pwt_direct_jump && !pwt_prologue_expected())
		pwt_direct_jump = false;
	if (!pwt_direct_jump)
		pr_info("re-entrant hook: the original is called through its entry\n");
	ret = ftrace_set_filter_ip(&pwt_ftrace_ops,
				   (unsigned long)balance_dirty_pages_ratelimited_flags,
				   0, 0);
	if (ret) {
		pr_err("cannot trace balance_dirty_pages_ratelimited_flags: %d\n", ret);
		return ret;
	}
	ret = register_ftrace_function(&pwt_ftrace_ops);
	if (ret == -EBUSY)
		pr_err("balance_dirty_pages_ratelimited_flags is already redirected by another IPMODIFY ftrace user (a livepatch?), or kernel.ftrace_enabled=0: -EBUSY\n");
	else if (ret)
		pr_err("cannot register the ftrace hook: %d\n", ret);
	if (ret)
		ftrace_free_filter(&pwt_ftrace_ops);
	return ret;
}

static int __init pwt_init(void)
{
	int ret;

	ret = pwt_knobs_init();
	if (ret)
		return ret;
	ret = pwt_tasks_init();
	if (ret)
		goto out_knobs;
	pwt_debugfs_init();
	pwt_sync_watch_init();
	/* Last: the hook goes live only once everything it uses exists. */
	ret = pwt_hook_init();
	if (ret) {
		pwt_sync_watch_exit();
		goto out_debugfs;
	}
	pr_info("loaded: window %d centisecs\n", READ_ONCE(pwt_ratio_centisecs));
	return 0;

out_debugfs:
	pwt_debugfs_exit();
	/* The refresh work sweeps the table: stop it before freeing that. */
	pwt_knobs_exit();
	pwt_tasks_exit();
	return ret;
out_knobs:
	pwt_knobs_exit();
	return ret;
}

static void __exit pwt_exit(void)
{
	int ret;

	/* Sleepers in pwt_wait_device() see this and return early. */
	WRITE_ONCE(pwt_unloading, true);
	/*
	 * After this no call is redirected, and (ftrace's own
	 * synchronize_rcu_tasks()) none is between the trampoline and our
	 * srcu_read_lock(). It fails only once ftrace has shut itself down
	 * after an ftrace bug (ftrace_disabled), which it has reported; nothing
	 * here can undo that, but the log must say which module was caught.
	 */
	ret = unregister_ftrace_function(&pwt_ftrace_ops);
	if (ret)
		pr_err("unregister_ftrace_function: %d (ftrace disabled itself); the hook may stay in place\n",
		       ret);
	/* Every task inside the wrapper, sleeping or not, has left it... */
	synchronize_srcu(&pwt_srcu);
	/* ...including the last instructions after srcu_read_unlock(). */
	synchronize_rcu_tasks();
	ftrace_free_filter(&pwt_ftrace_ops);
	/* No forced writeback reads the slots any more. */
	pwt_sync_watch_exit();

	pwt_debugfs_exit();
	pwt_knobs_exit();
	pwt_tasks_exit();
	pr_info("unloaded\n");
}

module_init(pwt_init);
module_exit(pwt_exit);
MODULE_DESCRIPTION("Per-task predictive write throttling (after Andrea Arcangeli, 2005)");
MODULE_AUTHOR("The pwthrottle developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(PWT_VERSION);
