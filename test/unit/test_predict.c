// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for module/predict.c: the prediction and the decision,
 * compiled from the module's own source and run under ASan/UBSan.
 * KTAP output (Documentation/dev-tools/ktap.rst), as the kernel's own
 * selftests print it: a diagnostic line per failed check, then one line per
 * test, "ok N unit/NAME" or "not ok N unit/NAME".
 */
#include <stdio.h>
#include <string.h>
#include <limits.h>
#include "pwt_predict.h"

static int failures;
static const char *cur;
static int cur_failed;

#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		printf("# unit/%s: ", cur);				\
		printf(__VA_ARGS__);					\
		printf(" [%s:%d: %s]\n", __FILE__, __LINE__, #cond);	\
		cur_failed = 1;						\
	}								\
} while (0)

/* One decision for a task whose previous verdict was @was_over. */
static bool decide(const struct pwt_global *g, unsigned long long future, bool was_over)
{
	bool over = was_over;

	return pwt_decide(g, future, &over);
}

static void run(int nr, const char *name, void (*fn)(void))
{
	cur = name;
	cur_failed = 0;
	fn();
	if (cur_failed)
		failures++;
	printf("%s %d unit/%s\n", cur_failed ? "not ok" : "ok", nr, name);
}

/* HZ=250 as on Debian; 5 s window = 1250 ticks. */
#define HZ 250
#define WINDOW (5 * HZ)

/* A task that dirties 1000 pages per window converges to twice that. */
static void steady_writer_converges_to_two_windows(void)
{
	struct pwt_pred p;
	unsigned long now = 1000;
	int w;

	pwt_pred_init(&p, now);
	for (w = 0; w < 40; w++) {
		/* 10 calls of 100 pages spread over the window */
		for (int i = 0; i < 10; i++) {
			pwt_pred_account(&p, now, WINDOW, 100);
			now += WINDOW / 10;
		}
	}
	CHECK(p.future_dirty >= 1900 && p.future_dirty <= 2000,
	      "future_dirty=%llu, want ~2000", (unsigned long long)p.future_dirty);
	/* 2000 pages over two 5 s windows = 200 pages/s */
	CHECK(pwt_pred_rate(&p, WINDOW, HZ) >= 190 && pwt_pred_rate(&p, WINDOW, HZ) <= 200,
	      "rate=%llu pages/s, want ~200", (unsigned long long)pwt_pred_rate(&p, WINDOW, HZ));
	/*
	 * A copy at 20 MiB/s (5120 pages/s): 51200 pages over two windows,
	 * more than a window's ticks per window, so both of the rate's terms
	 * count (whole ticks per window, then the remainder).
	 */
	p.future_dirty = 51200;
	CHECK(pwt_pred_rate(&p, WINDOW, HZ) == 5120, "rate=%llu pages/s, want 5120",
	      (unsigned long long)pwt_pred_rate(&p, WINDOW, HZ));
}

/* Each elapsed window halves once, even if nobody looked in between. */
static void idle_task_decays_once_per_window(void)
{
	struct pwt_pred p;

	pwt_pred_init(&p, 0);
	pwt_pred_account(&p, 0, WINDOW, 4096);
	pwt_pred_account(&p, WINDOW - 1, WINDOW, 0);
	CHECK(p.future_dirty == 4096, "no decay within the window: %llu",
	      (unsigned long long)p.future_dirty);
	pwt_pred_account(&p, 3 * WINDOW + 5, WINDOW, 0);
	CHECK(p.future_dirty == 512, "three windows: 4096 >> 3 = 512, got %llu",
	      (unsigned long long)p.future_dirty);
	/* the window phase is kept: the next halving is at 4 * WINDOW */
	CHECK(p.last_decay == 3 * WINDOW, "phase kept: last_decay=%lu", p.last_decay);
	pwt_pred_account(&p, 4 * WINDOW - 1, WINDOW, 0);
	CHECK(p.future_dirty == 512, "not yet: %llu", (unsigned long long)p.future_dirty);
	pwt_pred_account(&p, 4 * WINDOW, WINDOW, 0);
	CHECK(p.future_dirty == 256, "now: %llu", (unsigned long long)p.future_dirty);
}

/* 64 or more windows is zero, not an undefined shift. */
static void long_sleep_forgets_everything(void)
{
	struct pwt_pred p;

	pwt_pred_init(&p, 0);
	pwt_pred_account(&p, 0, WINDOW, UINT64_MAX);
	pwt_pred_account(&p, 64UL * WINDOW, WINDOW, 7);
	CHECK(p.future_dirty == 7, "after 64 windows only the new pages: %llu",
	      (unsigned long long)p.future_dirty);
	pwt_pred_account(&p, 64UL * WINDOW + 1000UL * WINDOW, WINDOW, 0);
	CHECK(p.future_dirty == 0, "1000 windows later: %llu",
	      (unsigned long long)p.future_dirty);
}

/* jiffies wrap: a window that spans ULONG_MAX -> 0 is one window. */
static void tick_wrap_is_one_window(void)
{
	struct pwt_pred p;
	unsigned long start = ULONG_MAX - WINDOW / 2;

	pwt_pred_init(&p, start);
	pwt_pred_account(&p, start, WINDOW, 1000);
	pwt_pred_account(&p, start + WINDOW / 4, WINDOW, 0);	/* still before wrap */
	CHECK(p.future_dirty == 1000, "before wrap: %llu", (unsigned long long)p.future_dirty);
	pwt_pred_account(&p, start + WINDOW + 1, WINDOW, 0);	/* wrapped past zero */
	CHECK(p.future_dirty == 500, "one window across the wrap halves once: %llu",
	      (unsigned long long)p.future_dirty);
}

/* A tick from "the future" (more than half the range away) resets. */
static void time_going_backwards_resets(void)
{
	struct pwt_pred p;

	pwt_pred_init(&p, 10000);
	pwt_pred_account(&p, 10000, WINDOW, 800);
	pwt_pred_account(&p, 9000, WINDOW, 3);	/* 1000 ticks "earlier" */
	CHECK(p.future_dirty == 3 && p.last_decay == 9000,
	      "reset to the new pages at the new time: %llu at %lu",
	      (unsigned long long)p.future_dirty, p.last_decay);
}

static void counts_saturate_instead_of_wrapping(void)
{
	struct pwt_pred p;

	pwt_pred_init(&p, 0);
	pwt_pred_account(&p, 0, WINDOW, UINT64_MAX - 1);
	pwt_pred_account(&p, 1, WINDOW, 10);
	CHECK(p.future_dirty == UINT64_MAX, "saturated: %llu",
	      (unsigned long long)p.future_dirty);
	struct pwt_global g = { .nr_dirty = UINT64_MAX, .nr_writeback = UINT64_MAX,
				.dirty_thresh = UINT64_MAX - 1 };
	CHECK(decide(&g, UINT64_MAX, false), "saturated sum still compares as over");
}

/* dirty_ratio_centisecs = 0: the prediction is frozen, nothing accumulates. */
static void window_zero_is_off(void)
{
	struct pwt_pred p;

	pwt_pred_init(&p, 0);
	pwt_pred_account(&p, 100, 0, 5000);
	CHECK(p.future_dirty == 0, "off: %llu", (unsigned long long)p.future_dirty);
	CHECK(pwt_pred_rate(&p, 0, HZ) == 0, "no rate when off");
}

/*
 * The 2005 experiment in numbers (1 GiB guest): thresh ~43000 pages, a hog
 * at 20 MB/s predicts ~50000 pages; a 10 MB writer predicts 2560.
 */
static void hog_is_over_light_writer_is_not(void)
{
	struct pwt_global g = { .nr_dirty = 8000, .nr_writeback = 4000,
				.dirty_thresh = 43000 };

	CHECK(decide(&g, 50000, false), "the hog is a predicted over-dirtier");
	CHECK(!decide(&g, 2560, false), "a 10 MB writer is not");
	/* exactly at the threshold is not over: the test is '>' */
	CHECK(!decide(&g, 43000 - 12000, false), "at the threshold exactly: not over");
	CHECK(decide(&g, 43000 - 12000 + 1, false), "one page past it: over");
}

/* The 2005 wedge: with nothing dirty, writeback cannot help; never over. */
static void nothing_dirty_never_over(void)
{
	struct pwt_global g = { .nr_dirty = 0, .nr_writeback = 40000,
				.dirty_thresh = 43000 };

	bool over = true;

	CHECK(!decide(&g, 1000000, false),
	      "no dirty pages: no throttling, however large the prediction");
	CHECK(!pwt_decide(&g, 1000000, &over), "not even for a task that was over...");
	CHECK(over, "...which keeps its verdict for when there is dirty memory again");
	g.nr_dirty = 1;
	CHECK(decide(&g, 1000000, false), "one dirty page: over again");
}

/*
 * A device-bound hog at 20 MB/s predicts between one window (25600 pages)
 * and two (51200) of its rate, sawing at each halving. Having crossed the
 * threshold it must stay over through the low point of the saw, or it
 * would dirty freely while its device idles; a task far below does not
 * inherit that.
 */
static void over_is_sticky_through_the_halving(void)
{
	struct pwt_global g = { .nr_dirty = 1000, .nr_writeback = 1000,
				.dirty_thresh = 41700 };

	CHECK(!decide(&g, 25600, false), "first crossing needs the full threshold");
	CHECK(decide(&g, 51200, false), "at two windows of rate: over");
	CHECK(decide(&g, 25600, true), "after the halving: still over");
	CHECK(decide(&g, 12800, true), "half a window of rate: still over");
	CHECK(!decide(&g, 41700 / 4 - 2000, true), "at a quarter of the threshold: released");
	CHECK(decide(&g, 41700 / 4 - 2000 + 1, true), "one page above a quarter: still over");
}

/* Same numbers as /proc/vmstat nr_dirty_threshold would show. */
static void threshold_matches_the_kernel_formula(void)
{
	/* dirty_ratio 20, 4 KiB pages: ratio scaled = 20*4096/100 = 819 */
	CHECK(pwt_dirty_thresh(215000, 20, 0, 4096) == 819ULL * 215000 / 4096,
	      "ratio path: %llu", (unsigned long long)pwt_dirty_thresh(215000, 20, 0, 4096));
	/* 819 * 215000 / 4096 = 42989.5, rounded down */
	CHECK(pwt_dirty_thresh(215000, 20, 0, 4096) == 42989, "known value 42989: %llu",
	      (unsigned long long)pwt_dirty_thresh(215000, 20, 0, 4096));
	/* dirty_bytes wins over the ratio and rounds up to pages */
	CHECK(pwt_dirty_thresh(215000, 20, 256 << 20, 4096) == 65536, "256 MiB: %llu",
	      (unsigned long long)pwt_dirty_thresh(215000, 20, 256 << 20, 4096));
	CHECK(pwt_dirty_thresh(215000, 20, 4097, 4096) == 2, "4097 bytes round up to 2 pages");
	/* clamped to 32 bits like domain_dirty_limits() */
	CHECK(pwt_dirty_thresh(UINT64_MAX, 100, 0, 4096) == UINT_MAX, "clamped: %llu",
	      (unsigned long long)pwt_dirty_thresh(UINT64_MAX, 100, 0, 4096));
	CHECK(pwt_dirty_thresh(1000, 0, 0, 4096) == 0, "ratio 0: no dirty memory allowed");
	CHECK(pwt_dirty_thresh(1000, 20, 0, 0) == 0, "page size 0 is nonsense, not a crash");
}

static void dirtied_pages(void)
{
	CHECK(pwt_dirtied_pages(0, 32 * 4096, 12) == 32, "plain growth");
	CHECK(pwt_dirtied_pages(4096, 4096 + 4095, 12) == 0, "a part page waits for the rest");
	CHECK(pwt_dirtied_pages(100, 100 + 3 * 4096 + 7, 12) == 3, "whole pages of an odd start");
	CHECK(pwt_dirtied_pages(5 * 4096, 4096, 12) == 0, "going back is nothing, not a huge number");
	CHECK(pwt_dirtied_pages(0, UINT64_MAX, 12) == UINT64_MAX >> 12, "the whole range");
	CHECK(pwt_dirtied_pages(7, 7, 12) == 0, "no change");
}

/* A new entry counts what the kernel has not balanced yet, no more. */
static void count_from(void)
{
	/* A task that wrote 10 GiB over its life, 8 pages since its last balance. */
	CHECK(pwt_count_from(10ULL << 30, 8, 12) == (10ULL << 30) - 8 * 4096,
	      "lifetime bytes are no rate");
	CHECK(pwt_count_from(3 * 4096, 8, 12) == 0, "never below 0");
	CHECK(pwt_count_from(1 << 20, -3, 12) == 1 << 20, "redirtied below 0: nothing pending");
	CHECK(pwt_count_from(UINT64_MAX, INT_MAX, 12) == UINT64_MAX - ((u64)INT_MAX << 12),
	      "largest nr_dirtied");
	CHECK(pwt_dirtied_pages(pwt_count_from(1 << 30, 32, 12), 1 << 30, 12) == 32,
	      "its first reading sees those pages");
}

/* Idle means no accounting for a whole window, whatever the phase. */
static void idle_after_one_silent_window(void)
{
	struct pwt_pred p;
	unsigned long t0 = ULONG_MAX - WINDOW / 2;	/* straddles the wrap */

	pwt_pred_init(&p, t0);
	CHECK(!pwt_pred_idle(&p, t0, WINDOW), "fresh entry is idle");
	/* Active up to just before the second window ends. */
	pwt_pred_account(&p, t0 + 2 * WINDOW - 1, WINDOW, 1);
	CHECK(p.last_decay == t0 + WINDOW, "phase kept: %lu", p.last_decay - t0);
	CHECK(!pwt_pred_idle(&p, t0 + 2 * WINDOW - 1, WINDOW), "idle right after a write");
	/* Less than a window of silence after that write: not idle... */
	CHECK(!pwt_pred_idle(&p, t0 + 3 * WINDOW - 1, WINDOW), "idle after < 1 window");
	/* ...a whole silent window however it falls: idle. */
	CHECK(pwt_pred_idle(&p, t0 + 3 * WINDOW + WINDOW - 1, WINDOW),
	      "not idle after a silent window");
	CHECK(pwt_pred_idle(&p, t0 + 2 * WINDOW - 1 + ULONG_MAX / 2 + 2, WINDOW),
	      "not idle half the tick range later");
	CHECK(pwt_pred_idle(&p, t0, 0), "window 0 (off): every entry is idle");
}

/*
 * A group's prediction keeps the pages of members that have exited. Ten
 * 10 MB writers one after another (the 2005 loop, one shell job) are
 * judged one by one; four writers of one group at once, as one.
 */
static void group_counts_only_writers_at_once(void)
{
	const u64 ten_mb = 10 * 256;	/* 4 KiB pages */
	struct pwt_global g = { .nr_dirty = 20000, .dirty_thresh = 40000 };
	struct pwt_pred job, dd;
	unsigned long now = 1000;
	int i;

	pwt_pred_init(&job, now);
	for (i = 0; i < 10; i++, now += WINDOW / 20) {
		pwt_pred_init(&dd, now);
		pwt_pred_account(&dd, now, WINDOW, ten_mb);
		pwt_pred_account(&job, now, WINDOW, ten_mb);
	}
	CHECK(job.future_dirty == 10 * ten_mb, "setup: the job's 100 MB, got %llu",
	      (unsigned long long)job.future_dirty);
	CHECK(pwt_judged_future(dd.future_dirty, job.future_dirty, 1) == ten_mb,
	      "one writer at a time: judged by its own 10 MB");
	CHECK(!decide(&g, pwt_judged_future(dd.future_dirty, job.future_dirty, 1), false),
	      "the loop's last dd is no over-dirtier");
	/* Four copies at once, 25 MB each so far: one 100 MB writer. */
	CHECK(pwt_judged_future(ten_mb * 5 / 2, job.future_dirty, 4) == 10 * ten_mb,
	      "writers at once: judged by the group");
	CHECK(decide(&g, pwt_judged_future(ten_mb * 5 / 2, job.future_dirty, 4), false),
	      "four copies at once are an over-dirtier");
	CHECK(pwt_judged_future(10 * ten_mb, ten_mb, 2) == 10 * ten_mb,
	      "a task's own prediction when larger than its group's");
	CHECK(pwt_judged_future(ten_mb, 0, 0) == ten_mb, "no group: its own");
	/* The fewest writers that make a group: two copies of one job. */
	CHECK(pwt_judged_future(ten_mb, 2 * ten_mb, PWT_GROUP_MIN_WRITERS) == 2 * ten_mb,
	      "%d writers at once: judged by the group", PWT_GROUP_MIN_WRITERS);
	CHECK(pwt_judged_future(ten_mb, 2 * ten_mb, PWT_GROUP_MIN_WRITERS - 1) == ten_mb,
	      "one writer fewer: its own");
}

/*
 * Held again after a wait that ran out of time: the hogs of the device and
 * memory rules, not a light writer over because others filled memory.
 */
static void hold_again_only_hogs(void)
{
	/* Memory full of someone else's pages (a loop device's worker). */
	struct pwt_global g = { .nr_dirty = 30000, .nr_writeback = 7000, .dirty_thresh = 38000 };
	struct pwt_dev disk = { .bw = 5120, .backlog = 36000 };	/* 20 MiB/s */
	bool over = false;

	CHECK(pwt_decide_dev(&g, &disk, 2560, 5000, &over) && over,
	      "setup: a 10 MB writer is over by the memory rule");
	CHECK(!pwt_hold_again(&g, &disk, 2560, 5000), "the light writer is not held again");
	CHECK(pwt_hold_again(&g, &disk, 38000 / 4, 5000),
	      "a prediction of a quarter of the threshold is");
	/* A stick hog: 100 MB predicted against a 1 MiB/s device. */
	disk.bw = 256;
	CHECK(pwt_hold_again(&g, &disk, 25600, 5000), "a hog of its device is");
	g.dirty_thresh = 400000;
	CHECK(pwt_hold_again(&g, &disk, 25600, 5000), "whatever the memory size");
}

/* 20 MiB/s and 2 GiB/s devices, in 4 KiB pages per second. */
#define SLOW_BW 5120ULL
#define FAST_BW 524288ULL

static void device_keeps_up_vetoes(void)
{
	/* dirty_ratio 20, dirty_background_ratio 10 */
	struct pwt_global g = { .nr_dirty = 20000, .nr_writeback = 1000, .dirty_thresh = 40000,
				.bg_thresh = 20000, .freerun = pwt_freerun(40000, 20000) };
	struct pwt_dev fast = { .bw = FAST_BW, .backlog = 21000 };
	bool over = false;

	/* 2005 rule alone: a lone copy's prediction is over the threshold. */
	CHECK(decide(&g, 100000, false), "setup: 2005 rule says over");
	CHECK(!pwt_decide_dev(&g, &fast, 100000, 5000, &over) && !over,
	      "fast device with 40 ms of backlog: not an over-dirtier");
	/*
	 * Past the freerun ceiling the kernel paces every writer, light ones
	 * too: a device that merely keeps up (here 410 ms of a 200 MB/s
	 * disk's bandwidth queued) is no excuse any more...
	 */
	struct pwt_dev disk = { .bw = 51200, .backlog = 21000 };

	g.nr_dirty = 30000;
	CHECK(pwt_decide_dev(&g, &disk, 100000, 5000, &over) && over,
	      "above freerun: the 2005 rule decides");
	/*
	 * ...unless it writes its whole backlog within PWT_FAST_DRAIN_MS:
	 * the kernel's pacing there is brief (7.3: 40-200 ms holds cost a
	 * copy to a 700 MB/s disk 12% of its bandwidth).
	 */
	over = false;
	CHECK(!pwt_decide_dev(&g, &fast, 100000, 5000, &over) && !over,
	      "above freerun, 40 ms of backlog: the device keeps up");
	/*
	 * More than a second queued is congestion, below the background
	 * threshold too: a hog on a slow disk must be caught before the
	 * flusher starts (the threaded hog's loop went from 0.92x to 4.6x
	 * when it was not).
	 */
	struct pwt_dev fed = { .bw = 16384, .backlog = 19000 };

	g.nr_dirty = 18000;
	over = false;
	CHECK(pwt_decide_dev(&g, &fed, 100000, 5000, &over) && over,
	      "more than a second queued: the 2005 rule, also below the background threshold");
	g.nr_dirty = 25000;
	CHECK(pwt_decide_dev(&g, &fed, 100000, 5000, &over) && over,
	      "above it, more than a second queued: the 2005 rule");
	g.nr_dirty = 20000;
	/*
	 * Already over (caught while its disk stalled, or before the
	 * bandwidth was known): let go once the device keeps up, where it
	 * writes the whole freerun budget (30000 pages) within a second...
	 */
	over = true;
	CHECK(!pwt_decide_dev(&g, &fast, 100000, 5000, &over) && !over,
	      "over, a device that outruns memory keeps up: released");
	struct pwt_dev just = { .bw = g.freerun, .backlog = 5000 };

	over = true;
	CHECK(!pwt_decide_dev(&g, &just, 100000, 5000, &over) && !over,
	      "over, the freerun budget in exactly a second: released");
	/* ...not where it writes less: a hog held at its rate stays held. */
	just.bw = g.freerun - 1;
	over = true;
	CHECK(pwt_decide_dev(&g, &just, 100000, 5000, &over) && over,
	      "over, the freerun budget in more than a second: stays over");
	struct pwt_dev held = { .bw = SLOW_BW, .backlog = 512 };

	over = true;
	CHECK(pwt_decide_dev(&g, &held, 10 * SLOW_BW, 5000, &over) && over,
	      "over, a 20 MiB/s disk with 100 ms queued: stays over");
	/* Nor while the device is behind: past freerun, 410 ms queued. */
	g.nr_dirty = 30000;
	over = true;
	CHECK(pwt_decide_dev(&g, &disk, 1000, 5000, &over) && over,
	      "over, past freerun with 410 ms queued: stays over");
	/* And not with the bandwidth unknown: the 2005 hysteresis. */
	struct pwt_dev unknown = { .bw = 0, .backlog = 21000 };

	g.nr_dirty = 20000;
	over = true;
	CHECK(pwt_decide_dev(&g, &unknown, 100000, 5000, &over) && over,
	      "over, bandwidth unknown: stays over");
}

/*
 * A hog for its device is one whose prediction is more than the device
 * writes in two windows, while more than PWT_CONGESTED_MS of its writing
 * is queued there: both strictly more, and never without a bandwidth.
 */
static void device_hog_edges(void)
{
	struct pwt_dev d = { .bw = SLOW_BW };
	u64 congested = pwt_dev_pages(&d, PWT_CONGESTED_MS);
	u64 two_windows = pwt_dev_pages(&d, 2 * 5000);

	CHECK(congested == SLOW_BW && two_windows == 10 * SLOW_BW,
	      "setup: a second and ten seconds of the stick: %llu, %llu",
	      (unsigned long long)congested, (unsigned long long)two_windows);
	d.backlog = congested + 1;
	CHECK(!pwt_dev_hog(&d, two_windows, 5000), "two windows of the device exactly: no hog");
	CHECK(pwt_dev_hog(&d, two_windows + 1, 5000), "a page more: a hog");
	d.backlog = congested;
	CHECK(!pwt_dev_hog(&d, two_windows + 1, 5000), "a second queued exactly: not congested");
	d.bw = 0;
	d.backlog = UINT64_MAX;
	CHECK(!pwt_dev_hog(&d, UINT64_MAX, 5000), "unknown bandwidth: never a hog by the device");
}

/*
 * A new entry's chain gives up idle entries until both the table and the
 * chain have room (pwt_evict_want()); a chain of chosen pids is held at
 * PWT_CHAIN_MAX whatever max_tasks allows.
 */
static void chain_bounded_whatever_the_pids(void)
{
	CHECK(pwt_evict_want(10, 4096, 3) == 0, "room in both: nothing to evict");
	CHECK(pwt_evict_want(4096, 4096, 3) == 1, "table full: one");
	CHECK(pwt_evict_want(4100, 4096, 3) == 5, "table over (max_tasks lowered): down to room for one");
	CHECK(pwt_evict_want(100, 65536, PWT_CHAIN_MAX - 1) == 0, "chain one short of full: nothing");
	CHECK(pwt_evict_want(100, 65536, PWT_CHAIN_MAX) == 1,
	      "chain full, table not (4096 chosen pids of one chain): one");
	CHECK(pwt_evict_want(4096, 4096, PWT_CHAIN_MAX + 2) == 3, "both over: the larger");
	CHECK(pwt_evict_want(0, 0, 0) == 1, "no room at all: one");
}

/*
 * Where writeback from the caller's context is not safe, the stock
 * throttle paces it, io_uring NOWAIT or not: -EAGAIN only where a caller
 * that may sleep would have been held.
 */
static void async_told_eagain_only_where_held(void)
{
	CHECK(pwt_act(false, true) == PWT_ACT_SKIP,
	      "NOWAIT write to a file mapped shared and writable: -EAGAIN for nothing");
	CHECK(pwt_act(false, false) == PWT_ACT_SKIP, "not safe here: skipped");
	CHECK(pwt_act(true, true) == PWT_ACT_EAGAIN, "NOWAIT, would be held: -EAGAIN");
	CHECK(pwt_act(true, false) == PWT_ACT_WRITEBACK, "held: writes back");
}

static void congested_device_hog_caught_early(void)
{
	/* A 64 GiB machine: the threshold is far away. */
	struct pwt_global g = { .nr_dirty = 60000, .nr_writeback = 512, .dirty_thresh = 3000000,
				.bg_thresh = 1500000, .freerun = 2250000 };
	struct pwt_dev usb = { .bw = SLOW_BW, .backlog = 60512 };
	bool over = false;

	CHECK(!decide(&g, 60000, false), "setup: 2005 rule waits for 12 GB");
	/* 240 MB in two windows against 200 MB the stick writes: a hog. */
	CHECK(pwt_decide_dev(&g, &usb, 60000, 5000, &over) && over, "USB hog not caught");
	/*
	 * Once over, it stays over while it is a hog for the stick, although
	 * the memory rule would let it go below a quarter of the threshold.
	 */
	CHECK(pwt_decide_dev(&g, &usb, 60000, 5000, &over) && over, "device hog released");
	/* A hog no more (the stick drained): the 2005 hysteresis decides. */
	usb.backlog = 1000;
	CHECK(!pwt_decide_dev(&g, &usb, 60000, 5000, &over) && !over, "not released");
	usb.backlog = 60512;
	/* 100 MB now and then (Andrea's light writer) is not. */
	over = false;
	CHECK(!pwt_decide_dev(&g, &usb, 25600, 5000, &over) && !over, "light writer caught");
	/* Nothing dirty left to write: over, but nothing to do. */
	g.nr_dirty = 0;
	over = false;
	CHECK(!pwt_decide_dev(&g, &usb, 60000, 5000, &over) && over, "wedge: must not write back");
}

static void freerun_ceiling(void)
{
	CHECK(pwt_freerun(40000, 20000) == 30000, "halfway between the thresholds");
	/* domain_dirty_limits(): background at or over the limit is half of it. */
	CHECK(pwt_freerun(2048, 22000) == 1536, "8 MiB dirty_bytes, 10%% background");
	CHECK(pwt_freerun(2048, 2048) == 1536, "equal thresholds");
	CHECK(pwt_freerun(UINT64_MAX, UINT64_MAX - 1) == UINT64_MAX - 1, "no overflow");
	CHECK(pwt_freerun(0, 0) == 0, "no threshold");
	CHECK(pwt_bg_thresh(40000, 20000) == 20000, "background as set");
	CHECK(pwt_bg_thresh(2048, 22000) == 1024, "background over the limit: half");
}

static void unknown_bandwidth_is_2005(void)
{
	struct pwt_global g = { .nr_dirty = 20000, .nr_writeback = 0, .dirty_thresh = 40000 };
	struct pwt_dev unknown = { .bw = 0, .backlog = 1 };
	bool over = false;

	CHECK(pwt_decide_dev(&g, &unknown, 30000, 5000, &over) && over, "2005 rule not applied");
	over = false;
	CHECK(!pwt_decide_dev(&g, &unknown, 10000, 5000, &over) && !over, "2005 rule not applied");
	CHECK(pwt_chunk_pages(&unknown, 100, 512) == 512, "unknown: the chunk cap");
	CHECK(pwt_inflight_pages(&unknown, 100, 512) == 2048, "unknown: four chunks as in 0.1.0");
	CHECK(pwt_drain_us(&unknown, 100, 1000, 20000) == 20000, "unknown: longest sleep");
}

static void writeback_sized_by_time(void)
{
	struct pwt_dev slow = { .bw = SLOW_BW }, fast = { .bw = FAST_BW };
	struct pwt_dev tiny = { .bw = 10 }, huge = { .bw = UINT64_MAX };

	/* 100 ms of 20 MiB/s is 512 pages: chunks of 128. */
	CHECK(pwt_inflight_pages(&slow, 100, 512) == 512, "slow in flight %llu",
	      (unsigned long long)pwt_inflight_pages(&slow, 100, 512));
	CHECK(pwt_chunk_pages(&slow, 100, 512) == 128, "slow chunk");
	/* A fast device: chunks at the cap, in flight 100 ms worth. */
	CHECK(pwt_chunk_pages(&fast, 100, 512) == 512, "fast chunk");
	CHECK(pwt_inflight_pages(&fast, 100, 512) == 52428, "fast in flight");
	/* A crawling device still gets whole 64 KiB chunks. */
	CHECK(pwt_chunk_pages(&tiny, 100, 512) == PWT_MIN_CHUNK, "tiny chunk");
	CHECK(pwt_inflight_pages(&tiny, 100, 512) == 4 * PWT_MIN_CHUNK, "tiny in flight");
	/* No overflow at absurd bandwidths or windows. */
	CHECK(pwt_dev_pages(&huge, 100) == UINT64_MAX, "huge bw saturates");
	CHECK(pwt_dev_pages(&slow, UINT64_MAX) == UINT64_MAX, "huge ms saturates");
	CHECK(pwt_chunk_pages(&huge, 100, 512) == 512, "huge bw: the cap");
	CHECK(pwt_drain_us(&huge, 5, 1000, 20000) == 1000, "huge bw: shortest sleep");
	CHECK(pwt_drain_us(&slow, UINT64_MAX, 1000, 20000) == 20000, "huge excess: longest");
	/* 51 pages at 5120 pages/s: about 10 ms. */
	CHECK(pwt_drain_us(&slow, 51, 1000, 20000) == 9960, "drain %llu us",
	      (unsigned long long)pwt_drain_us(&slow, 51, 1000, 20000));
}

static void large_folios_drain_too(void)
{
	struct pwt_dev slow = { .bw = SLOW_BW };
	u64 chunk = pwt_chunk_pages(&slow, 100, 512);
	u64 small = pwt_chunk_pages(&slow, 25, 512);

	/* Page-sized folios: two chunks, as the bound's design says. */
	CHECK(pwt_queue_pages(chunk, 1, false) == 2 * chunk, "4 KiB writes");
	CHECK(pwt_queue_pages(chunk, chunk, false) == 2 * chunk, "a chunk per write");
	/*
	 * A 1 MiB folio per write (256 pages; a chunk is 128, 32 at
	 * inflight_ms=25): two of them per folio dirtied, or the backlog
	 * never shrinks.
	 */
	CHECK(pwt_queue_pages(chunk, 256, false) == 512, "1 MiB folios: %llu",
	      (unsigned long long)pwt_queue_pages(chunk, 256, false));
	CHECK(pwt_queue_pages(small, 256, false) == 512, "1 MiB folios, 25 ms");
	/* More than a folio's worth is not one folio: at most two 2 MiB. */
	CHECK(pwt_queue_pages(chunk, 100000, false) == 2 * PWT_MAX_FOLIO_PAGES, "capped");
	CHECK(pwt_queue_pages(chunk, UINT64_MAX, false) == 2 * PWT_MAX_FOLIO_PAGES,
	      "no overflow");
	CHECK(pwt_queue_pages(4096, 100000, false) == 8192, "a larger chunk stands");
	/*
	 * While another process fsyncs: one folio, the least writeback can
	 * take (two were 100 ms of a 20 MiB/s stick, four times the bound).
	 * Page-sized folios queue two chunks all the same: those are within
	 * the bound already.
	 */
	CHECK(pwt_queue_pages(small, 256, true) == 256, "one 1 MiB folio: %llu",
	      (unsigned long long)pwt_queue_pages(small, 256, true));
	CHECK(pwt_queue_pages(small, 1, true) == 2 * small, "4 KiB writes, others fsync");
	CHECK(pwt_queue_pages(small, small, true) == 2 * small, "a chunk, others fsync");
	CHECK(pwt_queue_pages(small, UINT64_MAX, true) == PWT_MAX_FOLIO_PAGES,
	      "capped, others fsync");
}

/*
 * A device of SLOW_BW that saves up a burst of 100 ms of its rate while it
 * idles (QEMU's throttle) and a writer @ratio_pct percent of its rate that
 * pays a chunk per round: rounds until the writer is let go as kept up
 * (0: not within @rounds). The device was idle before the first round, and
 * again before round @stop_at (0: never), where the writer was stopped.
 */
static int kept_up_rounds(unsigned int ratio_pct, int stop_at, int rounds)
{
	struct pwt_dev d = { .bw = SLOW_BW };
	u64 chunk = pwt_chunk_pages(&d, 100, 512);
	u64 burst = pwt_dev_pages(&d, 100);
	/* What the device writes while the writer dirties a chunk. */
	u64 earned = chunk * 100 / ratio_pct;
	u64 credit = burst;
	u16 run = 0;
	int i;

	for (i = 1; i <= rounds; i++) {
		bool absorbed = credit >= chunk;

		credit = absorbed ? credit - chunk : 0;
		if (pwt_kept_up(&run, &d, chunk, absorbed))
			return i;
		credit += earned;
		if (credit > burst || i + 1 == stop_at)
			credit = burst;
	}
	return 0;
}

static void kept_up_takes_400_ms_of_the_device(void)
{
	struct pwt_dev d = { .bw = SLOW_BW };
	u64 limit = pwt_inflight_pages(&d, 100, 512);
	u64 chunk = pwt_chunk_pages(&d, 100, 512);
	u64 need = pwt_dev_pages(&d, PWT_KEPT_UP_MS);
	u16 run = 0;
	int i, let_go = 0;

	/* Absorbed: a chunk or more written, a chunk left under writeback. */
	d.writeback = limit / PWT_CHUNKS_IN_FLIGHT;
	d.backlog = limit / 2;
	CHECK(pwt_dev_absorbed(&d, chunk, 100, 512), "a round absorbed");
	CHECK(!pwt_dev_absorbed(&d, chunk - 1, 100, 512), "less than a chunk written");
	d.writeback++;
	CHECK(!pwt_dev_absorbed(&d, 2 * chunk, 100, 512), "more than a chunk in flight");
	d.writeback = 0;
	d.backlog = pwt_dev_pages(&d, PWT_FAST_DRAIN_MS) + 1;
	CHECK(!pwt_dev_absorbed(&d, 2 * chunk, 100, 512),
	      "over 200 ms of other files' dirty pages wait");
	d.backlog = 0;
	d.bw = 0;
	CHECK(pwt_dev_absorbed(&d, 512, 100, 512), "unknown bandwidth: four chunks");

	/* More than 400 ms of the device's bandwidth, absorbed in a row. */
	d.bw = SLOW_BW;
	for (i = 0; (u64)i * chunk < need; i++)
		let_go += pwt_kept_up(&run, &d, chunk, true);
	CHECK(!let_go && run == need / PWT_MIN_CHUNK,
	      "400 ms of the device: let go %d times, run %u", let_go, run);
	CHECK(pwt_kept_up(&run, &d, PWT_MIN_CHUNK, true) && run == 0,
	      "16 pages more let it go, and the run starts anew");
	CHECK(!pwt_kept_up(&run, &d, need, false) && run == 0, "not absorbed");
	CHECK(!pwt_kept_up(&run, &d, need - PWT_MIN_CHUNK, true) &&
	      !pwt_kept_up(&run, &d, chunk, false) && run == 0 &&
	      !pwt_kept_up(&run, &d, 2 * PWT_MIN_CHUNK, true),
	      "a full device resets a run");
	run = 0;
	d.bw = 0;
	CHECK(!pwt_kept_up(&run, &d, 1 << 20, true) && run == 0,
	      "never where the bandwidth is not measured");
	/* The ends of the range: 2 pages/s, and 4 GiB is enough. */
	d.bw = 2;
	CHECK(!pwt_kept_up(&run, &d, PWT_MIN_CHUNK - 1, true) &&
	      pwt_kept_up(&run, &d, PWT_MIN_CHUNK, true), "2 pages/s: 16 pages");
	d.bw = 1ULL << 39;
	CHECK(!pwt_kept_up(&run, &d, (UINT16_MAX - 1) * PWT_MIN_CHUNK, true) &&
	      pwt_kept_up(&run, &d, PWT_MIN_CHUNK, true), "2 PiB/s: 4 GiB");
	d.bw = (1ULL << 40) + 1;
	CHECK(pwt_kept_up(&run, &d, (u64)UINT16_MAX * PWT_MIN_CHUNK, true),
	      "past pwt_dev_pages()' range: 4 GiB");

	/*
	 * The saved-up burst: a hog ten times as fast as the device is never
	 * let go, nor one three times as fast across a stop (a burst before,
	 * one after: the trixie 6.12 CI run's stick), nor one at 1.4x; a
	 * writer just under the device's rate is, after 17 rounds of a chunk
	 * (128 pages).
	 */
	CHECK(!kept_up_rounds(1000, 0, 1000), "a hog at 10x");
	CHECK(!kept_up_rounds(1000, 4, 1000), "a hog at 10x across a stop");
	CHECK(!kept_up_rounds(300, 5, 1000), "a writer at 3x across a stop");
	CHECK(!kept_up_rounds(140, 0, 1000), "a writer at 1.4x");
	CHECK(kept_up_rounds(90, 0, 1000) == 17, "a writer at 0.9x: %d rounds",
	      kept_up_rounds(90, 0, 1000));
	/* The bound of the method: a burst covers a writer at 1.2x. */
	CHECK(kept_up_rounds(120, 0, 1000), "a writer at 1.2x is let go");
}

/*
 * A lone copy to a fast disk, caught past the freerun ceiling after a stall
 * of the disk (trixie's 6.12, 280 MB/s; its flusher keeps 60-70 MB dirty):
 * let go at the backlog where the decision would not have caught it, not
 * only once the pool is down to half the bound (14 MB there), after which
 * the disk ran short while the pool refilled.
 */
static void fast_disk_let_go_where_it_was_caught(void)
{
	struct pwt_global g = { .nr_dirty = 31000, .nr_writeback = 1024,
				.dirty_thresh = 42000, .bg_thresh = 21000,
				.freerun = pwt_freerun(42000, 21000) };
	struct pwt_dev d = { .bw = 72000, .writeback = 1024, .backlog = 14000 };
	u64 limit = pwt_inflight_pages(&d, 100, 1024);
	u64 chunk = pwt_chunk_pages(&d, 100, 1024);
	bool over = false;

	CHECK(d.backlog > limit / 2 && g.nr_dirty + g.nr_writeback > g.freerun,
	      "setup: more than half the bound waits, past the freerun ceiling");
	CHECK(pwt_dev_absorbed(&d, chunk, 100, 1024), "194 ms of the disk waits: absorbed");
	CHECK(!pwt_decide_dev(&g, &d, 1000000, 5000, &over) && !over,
	      "and a decision there would not have caught it");
	d.backlog = pwt_dev_pages(&d, PWT_FAST_DRAIN_MS) + 1;
	CHECK(!pwt_dev_absorbed(&d, chunk, 100, 1024), "over 200 ms: held on");
	CHECK(pwt_decide_dev(&g, &d, 1000000, 5000, &over) && over,
	      "where a decision catches it");
	d.backlog = 14000;
	d.writeback = limit / PWT_CHUNKS_IN_FLIGHT + 1;
	CHECK(!pwt_dev_absorbed(&d, chunk, 100, 1024), "our chunks still queued: held on");
}

/*
 * Another process's fsync on the device in the last second: the smaller
 * bound; none, an old one, or the knob at 0: inflight_ms.
 */
static void sync_bound_for_a_second(void)
{
	unsigned long now = 100000, second = HZ;

	CHECK(pwt_bound_ms(100, 25, 0, now, HZ) == 100, "no fsync seen yet (0)");
	CHECK(pwt_bound_ms(100, 25, now, now, HZ) == 25, "an fsync this tick");
	CHECK(pwt_bound_ms(100, 25, now - second + 1, now, HZ) == 25, "a second less a tick ago");
	CHECK(pwt_bound_ms(100, 25, now - second, now, HZ) == 100, "a second ago: over");
	CHECK(pwt_bound_ms(100, 25, now - 100 * second, now, HZ) == 100, "long ago");
	CHECK(pwt_bound_ms(100, 0, now, now, HZ) == 100, "sync_inflight_ms=0 is off");
	CHECK(pwt_bound_ms(100, 250, now, now, HZ) == 100, "never larger than inflight_ms");
	CHECK(pwt_bound_ms(20, 25, now, now, HZ) == 20, "inflight_ms already smaller");
	/* An fsync on another CPU after this one read the clock. */
	CHECK(pwt_bound_ms(100, 25, now + 1, now, HZ) == 25, "seen a tick ahead of now");
	/* jiffies wraps: 5 minutes after boot on Linux (INITIAL_JIFFIES). */
	CHECK(pwt_bound_ms(100, 25, ULONG_MAX - 10, 20, HZ) == 25, "across the wrap, 31 ticks");
	CHECK(pwt_bound_ms(100, 25, ULONG_MAX - second, second, HZ) == 100,
	      "across the wrap, two seconds");
	/* HZ=100 and HZ=1000 kernels: a second is HZ ticks on each. */
	CHECK(pwt_bound_ms(100, 25, now - 99, now, 100) == 25 &&
	      pwt_bound_ms(100, 25, now - 100, now, 100) == 100, "HZ=100");
	CHECK(pwt_bound_ms(100, 25, now - 999, now, 1000) == 25 &&
	      pwt_bound_ms(100, 25, now - 1000, now, 1000) == 100, "HZ=1000");
}

/*
 * Another process entered an fsync @hold_ms or less ago: hold for the rest
 * of @hold_ms; none, an old one, or the knob at 0: no hold.
 */
static void sync_hold_for_the_rest_of_hold_ms(void)
{
	unsigned long now = 100000, ticks = 100 * HZ / 1000;

	CHECK(pwt_sync_ticks_left(100, 0, now, HZ) == 0, "no fsync seen yet (0)");
	CHECK(pwt_sync_ticks_left(100, now, now, HZ) == ticks, "an fsync this tick: all of it");
	CHECK(pwt_sync_ticks_left(100, now - 10, now, HZ) == ticks - 10, "10 ticks ago: the rest");
	CHECK(pwt_sync_ticks_left(100, now - ticks + 1, now, HZ) == 1, "a tick left");
	CHECK(pwt_sync_ticks_left(100, now - ticks, now, HZ) == 0, "100 ms ago: over");
	CHECK(pwt_sync_ticks_left(100, now - 100 * HZ, now, HZ) == 0, "long ago");
	CHECK(pwt_sync_ticks_left(0, now, now, HZ) == 0, "sync_hold_ms=0 is off");
	/* Less than a tick is still a tick: rounded up, never 0. */
	CHECK(pwt_sync_ticks_left(1, now, now, HZ) == 1, "1 ms: one tick");
	CHECK(pwt_sync_ticks_left(10000, now, now, HZ) == 10 * HZ, "the largest knob");
	/* An fsync on another CPU after this one read the clock. */
	CHECK(pwt_sync_ticks_left(100, now + 1, now, HZ) == ticks, "seen a tick ahead of now");
	/* jiffies wraps: 5 minutes after boot on Linux (INITIAL_JIFFIES). */
	CHECK(pwt_sync_ticks_left(100, ULONG_MAX - 4, 0, HZ) == ticks - 5,
	      "across the wrap, 5 ticks");
	CHECK(pwt_sync_ticks_left(100, ULONG_MAX - HZ, HZ, HZ) == 0,
	      "across the wrap, two seconds");
	/* HZ=100 and HZ=1000: 100 ms is 10 and 100 ticks. */
	CHECK(pwt_sync_ticks_left(100, now - 9, now, 100) == 1 &&
	      pwt_sync_ticks_left(100, now - 10, now, 100) == 0, "HZ=100");
	CHECK(pwt_sync_ticks_left(100, now - 99, now, 1000) == 1 &&
	      pwt_sync_ticks_left(100, now - 100, now, 1000) == 0, "HZ=1000");
}

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Every test, in the order they run: the plan line counts them. */
#define TEST(fn) { #fn, fn }
static const struct {
	const char *name;
	void (*fn)(void);
} tests[] = {
	TEST(steady_writer_converges_to_two_windows),
	TEST(idle_task_decays_once_per_window),
	TEST(long_sleep_forgets_everything),
	TEST(tick_wrap_is_one_window),
	TEST(time_going_backwards_resets),
	TEST(counts_saturate_instead_of_wrapping),
	TEST(window_zero_is_off),
	TEST(hog_is_over_light_writer_is_not),
	TEST(nothing_dirty_never_over),
	TEST(over_is_sticky_through_the_halving),
	TEST(threshold_matches_the_kernel_formula),
	TEST(dirtied_pages),
	TEST(count_from),
	TEST(idle_after_one_silent_window),
	TEST(group_counts_only_writers_at_once),
	TEST(hold_again_only_hogs),
	TEST(device_keeps_up_vetoes),
	TEST(device_hog_edges),
	TEST(chain_bounded_whatever_the_pids),
	TEST(async_told_eagain_only_where_held),
	TEST(congested_device_hog_caught_early),
	TEST(freerun_ceiling),
	TEST(unknown_bandwidth_is_2005),
	TEST(writeback_sized_by_time),
	TEST(large_folios_drain_too),
	TEST(kept_up_takes_400_ms_of_the_device),
	TEST(fast_disk_let_go_where_it_was_caught),
	TEST(sync_bound_for_a_second),
	TEST(sync_hold_for_the_rest_of_hold_ms),
};

int main(void)
{
	size_t i, n = ARRAY_SIZE(tests);

	printf("KTAP version 1\n1..%zu\n", n);
	for (i = 0; i < n; i++)
		run(i + 1, tests[i].name, tests[i].fn);
	return failures ? 1 : 0;
}
