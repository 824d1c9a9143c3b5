// SPDX-License-Identifier: GPL-2.0
/*
 * pwthrottle knobs: vm.dirty_ratio_centisecs, the module parameters, and the
 * kernel's live dirty threshold.
 *
 * The threshold is the one balance_dirty_pages() enforces, rebuilt from
 * exported inputs: global_dirty_limits() is not exported and on IBT kernels
 * (6.12) its ENDBR is sealed, so calling it through a looked-up pointer
 * would BUG. Its inputs are the vm.dirty_ratio/dirty_bytes sysctls, which
 * are only readable through procfs, and the vmstat counters and node
 * reserves, which are exported. A delayed work re-reads the sysctls twice a
 * second, so a change is tracked within a second; the counters are read at
 * each decision.
 *
 * The sysctl files are opened with userspace's root (pwt_filp_open_init_fs()):
 * from 7.0 on a kworker's own root is empty, and "/proc/..." there is
 * ENOENT.
 */
#include <linux/module.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/vmstat.h>
#include <linux/nodemask.h>
#include <linux/workqueue.h>
#include <linux/kernel.h>
#include <linux/sysctl.h>
#include "pwt_compat.h"
#include "pwthrottle.h"

/* 5 s: the 2005 patch's default prediction window. */
#define PWT_RATIO_CENTISECS_DEFAULT 500
/* One hour: a longer window predicts nothing useful and risks overflow. */
#define PWT_RATIO_CENTISECS_MAX 360000

int pwt_ratio_centisecs = PWT_RATIO_CENTISECS_DEFAULT;
static int pwt_ratio_centisecs_max = PWT_RATIO_CENTISECS_MAX;

/*
 * The kernel's own defaults, used until the first read of procfs succeeds
 * (and forever if procfs is not mounted at /proc, which we warn about).
 */
static struct pwt_vm_sysctls pwt_vm = { .dirty_ratio = 20, .bg_ratio = 10 };
static DEFINE_SPINLOCK(pwt_vm_lock);

/* Sysctl refresh every 500 ms; task sweep every 20th refresh (10 s). */
#define PWT_REFRESH_MS 500
#define PWT_SWEEP_EVERY 20
static void pwt_refresh_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(pwt_refresh_work, pwt_refresh_fn);
static unsigned int pwt_refresh_count;
static bool pwt_refresh_stop;

static int pwt_read_proc_ulong(const char *path, unsigned long *val)
{
	char buf[32];
	struct file *f;
	loff_t pos = 0;
	ssize_t n;

	f = pwt_filp_open_init_fs(path);
	if (IS_ERR(f))
		return PTR_ERR(f);
	n = kernel_read(f, buf, sizeof(buf) - 1, &pos);
	filp_close(f, NULL);
	if (n <= 0)
		return n < 0 ? n : -EIO;
	buf[n] = '\0';
	return kstrtoul(strim(buf), 10, val);
}

/*
 * vm.dirty_ratio and vm.dirty_bytes as one consistent pair. Setting one
 * clears the other, in two steps: dirty_ratio_handler() stores the ratio,
 * then zeroes dirty_bytes; dirty_bytes_handler() stores the bytes, then
 * zeroes dirty_ratio. Two separate reads can straddle such a switch and
 * see both zero, a threshold of 0 that would make every writer an
 * over-dirtier until the next refresh. So read dirty_bytes on both sides
 * of dirty_ratio, like a seqcount: if it did not change, no switch
 * completed in between, and the pair is one the kernel had. The loop is
 * bounded; a pair still changing after that many tries is simply used.
 * dirty_background_ratio and dirty_background_bytes work the same way.
 */
#define PWT_SYSCTL_READ_TRIES 8

static int pwt_read_dirty_pair(const char *ratio_path, const char *bytes_path,
			       unsigned long *ratio, unsigned long *bytes)
{
	unsigned long again;
	int err, tries = PWT_SYSCTL_READ_TRIES;

	err = pwt_read_proc_ulong(bytes_path, bytes);
	while (!err) {
		err = pwt_read_proc_ulong(ratio_path, ratio);
		if (!err)
			err = pwt_read_proc_ulong(bytes_path, &again);
		if (err || again == *bytes || !--tries)
			break;
		*bytes = again;
	}
	return err;
}

void pwt_refresh_vm_sysctls(void)
{
	static bool warned;
	unsigned long ratio, bytes, bg_ratio, bg_bytes, reserve = 0;
	int nid, err, bg_err;

	err = pwt_read_dirty_pair("/proc/sys/vm/dirty_ratio",
				  "/proc/sys/vm/dirty_bytes", &ratio, &bytes);
	bg_err = pwt_read_dirty_pair("/proc/sys/vm/dirty_background_ratio",
				     "/proc/sys/vm/dirty_background_bytes",
				     &bg_ratio, &bg_bytes);
	if (err && !warned) {
		warned = true;
		pr_warn("cannot read /proc/sys/vm/dirty_{ratio,bytes} (%d); assuming dirty_ratio=%u\n",
			err, pwt_vm.dirty_ratio);
	}
	/*
	 * calculate_totalreserve_pages() keeps the per-node sums exact; their
	 * total is the unexported totalreserve_pages.
	 */
	for_each_online_node(nid)
		reserve += NODE_DATA(nid)->totalreserve_pages;

	spin_lock(&pwt_vm_lock);
	if (!err) {
		pwt_vm.dirty_ratio = min(ratio, 100UL);
		pwt_vm.dirty_bytes = bytes;
	}
	if (!bg_err) {
		pwt_vm.bg_ratio = min(bg_ratio, 100UL);
		pwt_vm.bg_bytes = bg_bytes;
	}
	pwt_vm.totalreserve = reserve;
	spin_unlock(&pwt_vm_lock);
}

void pwt_vm_sysctls(struct pwt_vm_sysctls *out)
{
	spin_lock(&pwt_vm_lock);
	*out = pwt_vm;
	spin_unlock(&pwt_vm_lock);
}

/*
 * global_dirtyable_memory() + domain_dirty_limits(), as of 6.1 and 6.12:
 * the dirty and background thresholds and the freerun ceiling.
 */
static void pwt_global_thresh(struct pwt_global *g)
{
	unsigned long free = global_zone_page_state(NR_FREE_PAGES);
	struct pwt_vm_sysctls vm;
	u64 dirtyable;

	pwt_vm_sysctls(&vm);
	free -= min(free, vm.totalreserve);
	dirtyable = (u64)free + global_node_page_state(NR_INACTIVE_FILE) +
		    global_node_page_state(NR_ACTIVE_FILE) + 1;
	g->dirty_thresh = pwt_dirty_thresh(dirtyable, vm.dirty_ratio,
					   vm.dirty_bytes, PAGE_SIZE);
	g->bg_thresh = pwt_bg_thresh(g->dirty_thresh,
				     pwt_dirty_thresh(dirtyable, vm.bg_ratio,
						      vm.bg_bytes, PAGE_SIZE));
	g->freerun = pwt_freerun(g->dirty_thresh, g->bg_thresh);
}

void pwt_read_global(struct pwt_global *g)
{
	g->nr_dirty = global_node_page_state(NR_FILE_DIRTY);
	g->nr_writeback = global_node_page_state(NR_WRITEBACK);
	pwt_global_thresh(g);
}

static void pwt_refresh_fn(struct work_struct *work)
{
	pwt_refresh_vm_sysctls();
	if (++pwt_refresh_count % PWT_SWEEP_EVERY == 0)
		pwt_tasks_sweep();
	if (!READ_ONCE(pwt_refresh_stop))
		schedule_delayed_work(&pwt_refresh_work,
				      msecs_to_jiffies(PWT_REFRESH_MS));
}

/*
 * vm.dirty_ratio_centisecs. proc_dointvec_minmax() already rejects values
 * out of range, garbage and a write with no number in it with -EINVAL. A
 * write it ignores, of zero length or past the file's start
 * (sysctl_writes_strict), returns 0 and stores nothing: our copy then
 * keeps its -1 and we say -EINVAL rather than succeed without a store.
 * Parsing into a copy also means readers never see a half-done store.
 */
/*
 * The window, from the sysctl or the parameter. Off forgets: what a task
 * writes while pwthrottle is off goes past the ftrace callback uncounted,
 * and an entry kept across would charge all of it to the task's first
 * decision once on again, as if dirtied in that moment (a database that
 * wrote 5 GB during an hour off would be held for several windows). So the
 * entries go with the switch to 0, and on again every task counts anew.
 */
static void pwt_window_store(int val)
{
	if (xchg(&pwt_ratio_centisecs, val) && !val)
		pwt_tasks_forget();
}

static int pwt_sysctl_handler(PWT_CTL_TABLE *table, int write,
			      void *buffer, size_t *lenp, loff_t *ppos)
{
	struct ctl_table tmp = *table;
	int val = READ_ONCE(pwt_ratio_centisecs);
	int ret;

	if (!write)
		return proc_dointvec(table, write, buffer, lenp, ppos);
	val = -1;
	tmp.data = &val;
	ret = proc_dointvec_minmax(&tmp, write, buffer, lenp, ppos);
	if (ret)
		return ret;
	if (val < 0)
		return -EINVAL;
	pwt_window_store(val);
	return 0;
}

static struct ctl_table pwt_sysctls[] = {
	{
		.procname	= "dirty_ratio_centisecs",
		.data		= &pwt_ratio_centisecs,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= pwt_sysctl_handler,
		.extra1		= SYSCTL_ZERO,
		.extra2		= &pwt_ratio_centisecs_max,
	},
	PWT_SYSCTL_END
};

static struct ctl_table_header *pwt_sysctl_header;

/*
 * Module parameters. Each is a struct pwt_knob carrying its range, so one
 * set of ops validates them all: a value outside the range, a negative or
 * non-numeric string, or an empty one is rejected with -EINVAL and the old
 * value stays.
 */
static int pwt_knob_set(const char *val, const struct kernel_param *kp)
{
	struct pwt_knob *k = kp->arg;
	unsigned int v;

	if (kstrtouint(val, 0, &v) || v < k->min || v > k->max) {
		pr_info_ratelimited("%s: rejected '%.32s': want %u..%u\n",
				    kp->name, val, k->min, k->max);
		return -EINVAL;
	}
	WRITE_ONCE(k->val, v);
	return 0;
}

static int pwt_knob_get(char *buf, const struct kernel_param *kp)
{
	const struct pwt_knob *k = kp->arg;

	return sysfs_emit(buf, "%u\n", READ_ONCE(k->val));
}

static const struct kernel_param_ops pwt_knob_ops = {
	.set = pwt_knob_set,
	.get = pwt_knob_get,
};

/*
 * Table size bound: memory is at most max_tasks * sizeof(struct pwt_task)
 * (and as many groups). At most PWT_CHAIN_MAX (64) entries a chain of the
 * 1024-bucket table, whatever the pids, so that every hold of the raw table
 * lock stays short (PREEMPT_RT); the largest max_tasks fills each chain
 * that far.
 */
struct pwt_knob pwt_max_tasks = { .val = 4096, .min = 1,
				  .max = PWT_CHAIN_MAX << PWT_HASH_BITS };
module_param_cb(max_tasks, &pwt_knob_ops, &pwt_max_tasks, 0644);
MODULE_PARM_DESC(max_tasks,
		 "Most tasks tracked at once; idle ones are evicted for new writers, beyond that new writers are not throttled (1..65536, default 4096)");

/*
 * 32 pages is the kernel's starting nr_dirtied_pause: decide about as often
 * as balance_dirty_pages() would look at a new task.
 */
struct pwt_knob pwt_ratelimit_pages = { .val = 32, .min = 1, .max = 65536 };
module_param_cb(ratelimit_pages, &pwt_knob_ops, &pwt_ratelimit_pages, 0644);
MODULE_PARM_DESC(ratelimit_pages,
		 "Pages a task dirties between two decisions (1..65536, default 32; 8 once over)");

/*
 * The largest chunk, for devices faster than 80 MiB/s; slower ones get a
 * quarter of inflight_ms of their bandwidth (pwt_chunk_pages()). 2 MiB: large
 * enough for efficient I/O, small enough that one chunk at 20 MB/s
 * completes within the kernel's 200 ms maximum pause.
 */
struct pwt_knob pwt_write_chunk_pages = { .val = 512, .min = 16, .max = 65536 };
module_param_cb(write_chunk_pages, &pwt_knob_ops, &pwt_write_chunk_pages, 0644);
MODULE_PARM_DESC(write_chunk_pages,
		 "Largest chunk an over-dirtier dirties between forced writebacks, pages (16..65536, default 512)");

/*
 * 100 ms of the device's bandwidth under an over-dirtier's writeback: what
 * another task's fsync or journal commit may queue behind. 20 MiB/s: 2 MiB.
 */
struct pwt_knob pwt_inflight_ms = { .val = 100, .min = 1, .max = 10000 };
module_param_cb(inflight_ms, &pwt_knob_ops, &pwt_inflight_ms, 0644);
MODULE_PARM_DESC(inflight_ms,
		 "Most writeback an over-dirtier keeps queued, in ms of its device's bandwidth (1..10000, default 100)");

/*
 * 25 ms: the bound while another process fsyncs on the device, which
 * waits for what the over-dirtier has in flight (pwt_bound_ms()). About
 * an fsync's own time on a disk that answers within milliseconds (10-18
 * ms at 20-40 MiB/s under QEMU; beside a hog 1.3-7.9x that, 7.4-13.2x
 * at 100: make bench); not lower, since four chunks of 64 KiB are 12.5 ms
 * of a 20 MiB/s stick anyway. 0: the same bound whoever waits.
 */
struct pwt_knob pwt_sync_inflight_ms = { .val = 25, .min = 0, .max = 10000 };
module_param_cb(sync_inflight_ms, &pwt_knob_ops, &pwt_sync_inflight_ms, 0644);
MODULE_PARM_DESC(sync_inflight_ms,
		 "inflight_ms while another process fsyncs on the device, ms (0..10000, default 25; 0: off)");

/*
 * How long an over-dirtier holds its writeback back after another process
 * entered an fsync on the device, and at most in one forced writeback:
 * the fsync's own page queues behind what is already in flight, the
 * journal writes it waits for next behind nothing more of the hog's.
 * 100 ms: inflight_ms, what an fsync may wait behind of the hog's, is
 * what the hog waits for an fsync. Twenty fsyncs beside a hog on a 20
 * MiB/s disk, one boot each (make bench): on 7.3 4.1x their time alone
 * with 25, 1.2x with 50, 1.0x with 100 (7.1x without), the hog writing
 * 105%, 60% and 58% of its rate meanwhile; on 6.1 1.5x, 0.8x and 1.2x
 * (2.8x), at 43%, 38% and 38%. Never longer than max_pause_ms. 0: off.
 */
struct pwt_knob pwt_sync_hold_ms = { .val = 100, .min = 0, .max = 10000 };
module_param_cb(sync_hold_ms, &pwt_knob_ops, &pwt_sync_hold_ms, 0644);
MODULE_PARM_DESC(sync_hold_ms,
		 "Hold writeback back after another process's fsync on the device, ms (0..10000, default 100; 0: off)");

/* The kernel's MAX_PAUSE: no task waits longer in one throttle. */
struct pwt_knob pwt_max_pause_ms = { .val = 200, .min = 1, .max = 10000 };
module_param_cb(max_pause_ms, &pwt_knob_ops, &pwt_max_pause_ms, 0644);
MODULE_PARM_DESC(max_pause_ms,
		 "Longest wait of one forced writeback, ms (1..10000, default 200)");

/*
 * 1, processes: the threads of a process (a threaded copier, io_uring and
 * its io-wq workers) writing at once are one writer. 2 makes a shell job's
 * writers at work together one writer (xargs -P4 cp, make -j); a job's
 * writers that follow one another (a shell loop of dd's) are still judged
 * one by one. See the top of main.c.
 */
struct pwt_knob pwt_group_by = { .val = PWT_GROUP_PROCESS,
				 .min = PWT_GROUP_NONE, .max = PWT_GROUP_JOB };
module_param_cb(group_by, &pwt_knob_ops, &pwt_group_by, 0644);
MODULE_PARM_DESC(group_by,
		 "Predict writers together: 0 each thread alone, 1 per process (default), 2 per process group");

/* The window is also a parameter so modprobe.d can set it before any write. */
static int pwt_window_set(const char *val, const struct kernel_param *kp)
{
	int v;

	if (kstrtoint(val, 0, &v) || v < 0 || v > PWT_RATIO_CENTISECS_MAX) {
		pr_info_ratelimited("%s: rejected '%.32s': want 0..%d\n",
				    kp->name, val, PWT_RATIO_CENTISECS_MAX);
		return -EINVAL;
	}
	pwt_window_store(v);
	return 0;
}

static const struct kernel_param_ops pwt_window_ops = {
	.set = pwt_window_set,
	.get = param_get_int,
};
module_param_cb(dirty_ratio_centisecs, &pwt_window_ops, &pwt_ratio_centisecs, 0644);
MODULE_PARM_DESC(dirty_ratio_centisecs,
		 "Prediction window in 1/100 s, as vm.dirty_ratio_centisecs (0 = off, ..360000, default 500)");

int pwt_knobs_init(void)
{
	pwt_refresh_vm_sysctls();
	pwt_sysctl_header = register_sysctl("vm", pwt_sysctls);
	if (!pwt_sysctl_header) {
		pr_err("cannot register vm.dirty_ratio_centisecs (already present?)\n");
		return -EEXIST;
	}
	schedule_delayed_work(&pwt_refresh_work, msecs_to_jiffies(PWT_REFRESH_MS));
	return 0;
}

void pwt_knobs_exit(void)
{
	WRITE_ONCE(pwt_refresh_stop, true);
	cancel_delayed_work_sync(&pwt_refresh_work);
	unregister_sysctl_table(pwt_sysctl_header);
}
