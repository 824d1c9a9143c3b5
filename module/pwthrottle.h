/* SPDX-License-Identifier: GPL-2.0 */
/* pwthrottle: declarations shared by the module's files. */
#ifndef _PWTHROTTLE_H
#define _PWTHROTTLE_H

#include <linux/build_bug.h>
#include <linux/types.h>
#include <linux/percpu.h>
#include <linux/hashtable.h>
#include <linux/rculist.h>
#include <linux/sched.h>
#include <linux/srcu.h>
#include <linux/jiffies.h>
#include "pwt_predict.h"
#include "pwt_trace_types.h"

/* --- knobs.c: sysctl, module parameters, the kernel's dirty threshold --- */

/* vm.dirty_ratio_centisecs: the prediction window; 0 turns pwthrottle off. */
extern int pwt_ratio_centisecs;

/*
 * A module parameter with its valid range. Readers on the hot path use
 * READ_ONCE(knob.val); writers go through the param ops, which reject
 * anything outside [min, max] and keep the old value.
 */
struct pwt_knob {
	unsigned int val;
	unsigned int min;
	unsigned int max;
};

extern struct pwt_knob pwt_max_tasks;
extern struct pwt_knob pwt_ratelimit_pages;
extern struct pwt_knob pwt_write_chunk_pages;
extern struct pwt_knob pwt_max_pause_ms;
extern struct pwt_knob pwt_group_by;
extern struct pwt_knob pwt_inflight_ms;
extern struct pwt_knob pwt_sync_inflight_ms;
extern struct pwt_knob pwt_sync_hold_ms;

/* What pwt_group_by groups a writer with (see the top of main.c). */
enum pwt_group_by {
	PWT_GROUP_NONE,		/* every thread on its own, as in 2005 */
	PWT_GROUP_PROCESS,	/* the threads of one process */
	PWT_GROUP_JOB,		/* one process group: a pipeline, xargs, make */
};

/* The vm.dirty_* sysctls as last read, refreshed by pwt_refresh_work. */
struct pwt_vm_sysctls {
	unsigned int dirty_ratio;
	unsigned long dirty_bytes;
	unsigned int bg_ratio;		/* vm.dirty_background_ratio */
	unsigned long bg_bytes;		/* vm.dirty_background_bytes */
	unsigned long totalreserve;	/* sum of the nodes' reserves, pages */
};

/* The prediction window in jiffies; 0: pwthrottle is off. */
static inline unsigned long pwt_window(void)
{
	return msecs_to_jiffies(READ_ONCE(pwt_ratio_centisecs) * 10);
}

void pwt_read_global(struct pwt_global *g);
void pwt_vm_sysctls(struct pwt_vm_sysctls *out);
int pwt_knobs_init(void);
void pwt_knobs_exit(void);
void pwt_refresh_vm_sysctls(void);

/* --- task.c: per-task and per-group state --- */

/*
 * struct pwt_group - the prediction shared by the writers of one group
 *
 * Hashed by @key, the struct pid of the thread group or process group, of
 * which we hold a reference so that its address is never reused for another
 * group while we compare against it. @members counts the task entries that
 * point here; a group with none is unhashed by the sweep and freed after a
 * grace period. @writers counts those of them still hashed: an entry
 * unhashed at exit or eviction is no writer any more, though it may point
 * here until it is freed. Inserted and removed under pwt_tasks_lock.
 */
struct pwt_group {
	struct hlist_node node;
	struct rcu_head rcu;
	struct pid *key;
	pid_t nr;		/* @key's number in the initial namespace */
	atomic_t members;
	atomic_t writers;
	spinlock_t lock;	/* @pred: every member updates it */
	struct pwt_pred pred;
};

/*
 * struct pwt_task - what pwthrottle knows about one thread
 *
 * Looked up under RCU by pid; inserted and removed under pwt_tasks_lock;
 * freed after a grace period. Apart from the identity fields (set before
 * publication), only the owning thread writes an entry, from its own write
 * path, so its fields need no lock: readers in debugfs use READ_ONCE and may
 * see a slightly stale but never a torn value.
 */
struct pwt_task {
	struct hlist_node node;
	struct rcu_head rcu;
	pid_t pid;
	pid_t tgid;
	u64 start_time;		/* task->start_time: tells a reused pid apart */
	char comm[TASK_COMM_LEN];

	struct pwt_group *grp;	/* NULL: on its own; only the owner changes it */
	struct pwt_pred pred;
	u64 written_seen;	/* its ioac.write_bytes counted so far */
	unsigned int since_writeback;	/* pages since the last forced writeback */
	bool over;		/* last decision: predicted over-dirtier */
	bool busy;		/* in forced writeback: no re-entry */
	u16 kept_up_run;	/* pages absorbed in a row / 16 (pwt_kept_up()) */

	u64 throttles;
	u64 forced_pages;
	u64 throttled_ns;
};

/*
 * Two cachelines, and no more: a hooked call reads the first (the hash
 * chain, pid and start time of the lookup) and, at most, the second (the
 * counters); a field added must fit or replace one. max_tasks entries (4096
 * by default) are then 512 KiB at most, groups and hash tables aside
 * (debugfs "stats": task_bytes, group_bytes, hash_bytes, max_bytes).
 */
#define PWT_TASK_BYTES_MAX 128
static_assert(sizeof(struct pwt_task) <= PWT_TASK_BYTES_MAX);

#define PWT_HASH_BITS 10
extern struct hlist_head pwt_tasks_hash[1 << PWT_HASH_BITS];

struct pwt_task *pwt_task_new(bool stale_seen);

/*
 * The current task's entry, made on first use (pwt_task_new(), NULL when
 * the table is full). Inline, and the making out of line, because every
 * hooked call looks its entry up. The start time is compared inside the
 * read section: an entry of this pid's previous owner may be swept and
 * freed at any time. Our own entry may not (see the top of task.c), so it
 * stays valid after the unlock.
 */
static inline struct pwt_task *pwt_task_get(void)
{
	struct task_struct *tsk = current;
	struct pwt_task *t;
	bool mine = false;

	rcu_read_lock();
	hash_for_each_possible_rcu(pwt_tasks_hash, t, node, tsk->pid) {
		if (t->pid == tsk->pid) {
			mine = t->start_time == tsk->start_time;
			break;
		}
	}
	rcu_read_unlock();
	if (likely(mine))
		return t;
	return pwt_task_new(t);
}

u64 pwt_group_account(struct pwt_task *t, unsigned int pages,
		      unsigned int *writers);
int pwt_tasks_init(void);
void pwt_tasks_stop(void);
void pwt_tasks_exit(void);
void pwt_tasks_sweep(void);
void pwt_tasks_forget(void);
unsigned int pwt_tasks_count(void);
unsigned int pwt_groups_count(void);

/* What the table costs: an entry, a group, the two hash tables' heads. */
struct pwt_memory {
	unsigned int task_bytes;
	unsigned int group_bytes;
	unsigned int hash_bytes;
};

void pwt_tasks_memory(struct pwt_memory *mem);

/*
 * Held by the wrapper: pwt_srcu for all of it, the call to the original
 * included (rmmod waits for it); pwt_task_srcu around every use of a task
 * entry, i.e. around pwt_throttle() only (evicted entries wait for it).
 */
extern struct srcu_struct pwt_srcu;
extern struct srcu_struct pwt_task_srcu;

/* --- stats.c: counters, per CPU so the write path never shares a cacheline --- */

struct pwt_stats {
	u64 calls;		/* hooked calls while enabled */
	u64 checks;		/* decisions taken */
	u64 throttles;		/* decisions that forced writeback */
	u64 forced_pages;	/* pages written back by force */
	u64 async_eagain;	/* BDP_ASYNC callers told to retry */
	u64 skipped;		/* over, but unsafe to write back here */
	u64 drops;		/* calls with no entry: table full or no memory */
	u64 evictions;		/* idle entries of live tasks dropped for room */
	u64 sync_bounded;	/* forced writebacks under sync_inflight_ms */
	u64 sync_held;		/* of those, held back for an fsync first */
};

DECLARE_PER_CPU(struct pwt_stats, pwt_stats);
#define pwt_stat_add(field, n) this_cpu_add(pwt_stats.field, (n))
void pwt_stats_sum(struct pwt_stats *sum);

/* --- device.c: the writer's device, the wait of a forced writeback --- */

/* Set by rmmod: sleepers in pwt_wait_device() return. */
extern bool pwt_unloading;

struct inode;
void pwt_read_dev(struct inode *inode, struct pwt_dev *d);
u64 pwt_inode_bound_ms(struct inode *inode, bool *fsync_waits);
void pwt_sync_watch_init(void);
void pwt_sync_watch_exit(void);
enum pwt_wait_end pwt_wait_device(struct inode *inode, u64 future,
				  ktime_t deadline, ktime_t hold_end,
				  struct pwt_dev *d, u64 *limit);
bool pwt_dev_absorbed_now(struct inode *inode, long written, struct pwt_dev *d,
			  u64 *limit);

/* --- debugfs.c --- */
void pwt_debugfs_init(void);
void pwt_debugfs_exit(void);

#endif /* _PWTHROTTLE_H */
