// SPDX-License-Identifier: GPL-2.0
/*
 * pwthrottle debugfs: /sys/kernel/debug/pwthrottle/{tasks,stats}.
 *
 * Read-only (0444, no write/ioctl/mmap) because under Secure Boot lockdown
 * debugfs refuses to open anything else. Knobs live in sysctl and module
 * parameters instead.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/hashtable.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include "pwthrottle.h"

static struct dentry *pwt_debugfs_dir;

static int pwt_tasks_show(struct seq_file *m, void *v)
{
	unsigned long window = pwt_window();
	struct pwt_pred pred, gpred;
	struct pwt_group *g;
	struct pwt_task *t;
	int bkt;

	seq_puts(m, "pid\ttgid\tcomm\tfuture_pages\trate_kbps\tover\tthrottles\tforced_pages\tthrottled_ms\tgroup\tgroup_pages\n");
	rcu_read_lock();
	hash_for_each_rcu(pwt_tasks_hash, bkt, t, node) {
		/*
		 * Show the prediction as of now, decayed, without touching the
		 * entry: only its owner writes it.
		 */
		pred.future_dirty = READ_ONCE(t->pred.future_dirty);
		pred.last_decay = READ_ONCE(t->pred.last_decay);
		pwt_pred_account(&pred, jiffies, window, 0);
		/* A group is freed only after a grace period: RCU covers it. */
		g = READ_ONCE(t->grp);
		gpred.future_dirty = g ? READ_ONCE(g->pred.future_dirty) : 0;
		gpred.last_decay = g ? READ_ONCE(g->pred.last_decay) : jiffies;
		pwt_pred_account(&gpred, jiffies, window, 0);
		seq_printf(m, "%d\t%d\t%s\t%llu\t%llu\t%d\t%llu\t%llu\t%llu\t%d\t%llu\n",
			   t->pid, t->tgid, t->comm, pred.future_dirty,
			   pwt_pred_rate(&pred, window, HZ) * (PAGE_SIZE / 1024),
			   READ_ONCE(t->over), READ_ONCE(t->throttles),
			   READ_ONCE(t->forced_pages),
			   div_u64(READ_ONCE(t->throttled_ns), NSEC_PER_MSEC),
			   g ? g->nr : 0, gpred.future_dirty);
	}
	rcu_read_unlock();
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(pwt_tasks);

static int pwt_stats_show(struct seq_file *m, void *v)
{
	struct pwt_vm_sysctls vm;
	struct pwt_memory mem;
	struct pwt_global g;
	struct pwt_stats s;
	unsigned int max_tasks;

	pwt_stats_sum(&s);
	pwt_tasks_memory(&mem);
	max_tasks = READ_ONCE(pwt_max_tasks.val);
	pwt_read_global(&g);
	pwt_vm_sysctls(&vm);
	seq_printf(m, "calls %llu\n", s.calls);
	seq_printf(m, "checks %llu\n", s.checks);
	seq_printf(m, "throttles %llu\n", s.throttles);
	seq_printf(m, "forced_pages %llu\n", s.forced_pages);
	seq_printf(m, "async_eagain %llu\n", s.async_eagain);
	seq_printf(m, "skipped %llu\n", s.skipped);
	seq_printf(m, "drops %llu\n", s.drops);
	seq_printf(m, "evictions %llu\n", s.evictions);
	seq_printf(m, "sync_bounded %llu\n", s.sync_bounded);
	seq_printf(m, "sync_held %llu\n", s.sync_held);
	seq_printf(m, "tasks %u\n", pwt_tasks_count());
	seq_printf(m, "groups %u\n", pwt_groups_count());
	seq_printf(m, "group_by %u\n", READ_ONCE(pwt_group_by.val));
	seq_printf(m, "max_tasks %u\n", max_tasks);
	seq_printf(m, "task_bytes %u\n", mem.task_bytes);
	seq_printf(m, "group_bytes %u\n", mem.group_bytes);
	seq_printf(m, "hash_bytes %u\n", mem.hash_bytes);
	/* The most the table can hold: max_tasks entries and groups. */
	seq_printf(m, "max_bytes %llu\n",
		   (u64)max_tasks * (mem.task_bytes + mem.group_bytes) + mem.hash_bytes);
	seq_printf(m, "dirty_ratio_centisecs %d\n", READ_ONCE(pwt_ratio_centisecs));
	seq_printf(m, "nr_dirty %llu\n", g.nr_dirty);
	seq_printf(m, "nr_writeback %llu\n", g.nr_writeback);
	seq_printf(m, "dirty_thresh %llu\n", g.dirty_thresh);
	seq_printf(m, "bg_thresh %llu\n", g.bg_thresh);
	seq_printf(m, "freerun %llu\n", g.freerun);
	seq_printf(m, "vm_dirty_ratio %u\n", vm.dirty_ratio);
	seq_printf(m, "vm_dirty_bytes %lu\n", vm.dirty_bytes);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(pwt_stats);

void pwt_debugfs_init(void)
{
	/* debugfs failures are not fatal: throttling works without them. */
	pwt_debugfs_dir = debugfs_create_dir("pwthrottle", NULL);
	debugfs_create_file("tasks", 0444, pwt_debugfs_dir, NULL, &pwt_tasks_fops);
	debugfs_create_file("stats", 0444, pwt_debugfs_dir, NULL, &pwt_stats_fops);
}

void pwt_debugfs_exit(void)
{
	debugfs_remove_recursive(pwt_debugfs_dir);
}
