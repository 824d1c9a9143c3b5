// SPDX-License-Identifier: GPL-2.0
/*
 * pwthrottle per-task state: a hashtable of struct pwt_task keyed by pid.
 *
 * Lookups run under RCU on every hooked call; inserts and removals take
 * pwt_tasks_lock, which is only ever taken in process context (the write
 * path, the sched_process_exit probe, the sweep work), never from an
 * interrupt, so no irq-disabling variant is needed. It is a raw spinlock
 * because the exit probe runs with preemption disabled before 7.0, and on
 * PREEMPT_RT a spinlock_t is a sleeping lock there. Every hold is short:
 * one hash chain (the sweep takes it per bucket). Entries are freed with
 * call_rcu() and rmmod waits for them with rcu_barrier(). We do not use
 * kfree_rcu(): before 6.12 nothing lets a module wait for its batched frees
 * before destroying the slab cache.
 *
 * Who may remove an entry, and why the owner can keep using its pointer
 * after rcu_read_unlock() while it sleeps in forced writeback:
 *  - the exit probe removes the exiting task's own entry: the owner is the
 *    one exiting, so it is not in the write path any more;
 *  - the sweep removes entries whose task is gone or whose pid was reused,
 *    never the entry of a live task with a matching start_time;
 *  - a reused pid's new owner replaces the stale entry, it never adopts it;
 *  - module exit, after synchronize_srcu() has waited for every owner.
 */
#include <linux/hashtable.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/tracepoint.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/string.h>
#include <linux/jiffies.h>
#include "pwt_compat.h"
#include "pwthrottle.h"

DEFINE_HASHTABLE(pwt_tasks_hash, PWT_HASH_BITS);
static DEFINE_RAW_SPINLOCK(pwt_tasks_lock);
static unsigned int pwt_nr_tasks;	/* under pwt_tasks_lock */
static struct kmem_cache *pwt_task_cache;
static struct tracepoint *pwt_exit_tp;

unsigned int pwt_tasks_count(void)
{
	return READ_ONCE(pwt_nr_tasks);
}

static void pwt_task_free_rcu(struct rcu_head *rcu)
{
	kmem_cache_free(pwt_task_cache, container_of(rcu, struct pwt_task, rcu));
}

/* Caller holds pwt_tasks_lock; @t is hashed. */
static void pwt_task_unhash(struct pwt_task *t)
{
	hlist_del_init_rcu(&t->node);
	pwt_nr_tasks--;
	call_rcu(&t->rcu, pwt_task_free_rcu);
}

static struct pwt_task *pwt_task_find(pid_t pid)
{
	struct pwt_task *t;

	hash_for_each_possible_rcu(pwt_tasks_hash, t, node, pid)
		if (t->pid == pid)
			return t;
	return NULL;
}

/*
 * The current task's entry, created on first use. Returns NULL when the
 * table is full or memory is short: that task is simply not throttled by
 * us, and the stock throttle still applies. GFP_NOWAIT because we may hold
 * i_rwsem and sb freeze protection, and because a missing entry is harmless.
 */
struct pwt_task *pwt_task_get(void)
{
	struct task_struct *tsk = current;
	struct pwt_task *t, *stale;
	bool found;

	/*
	 * Compared inside the read section: an entry of this pid's previous
	 * owner may be swept and freed at any time. Our own entry may not
	 * (see the top of this file), so it stays valid after the unlock.
	 */
	rcu_read_lock();
	t = pwt_task_find(tsk->pid);
	found = t;
	if (t && t->start_time != tsk->start_time)
		t = NULL;
	rcu_read_unlock();
	if (likely(t))
		return t;

	if (READ_ONCE(pwt_nr_tasks) >= READ_ONCE(pwt_max_tasks.val) && !found)
		goto drop;
	t = kmem_cache_zalloc(pwt_task_cache, GFP_NOWAIT | __GFP_NOWARN);
	if (!t)
		goto drop;
	t->pid = tsk->pid;
	t->tgid = tsk->tgid;
	t->start_time = tsk->start_time;
	strscpy(t->comm, tsk->comm, sizeof(t->comm));
	pwt_pred_init(&t->pred, jiffies);
	/* nr_dirtied counts from 0 at fork; pages before this call count too. */
	t->nr_dirtied_seen = 0;

	raw_spin_lock(&pwt_tasks_lock);
	/* A previous owner of this pid is dead: its entry goes. */
	stale = pwt_task_find(tsk->pid);
	if (stale)
		pwt_task_unhash(stale);
	if (pwt_nr_tasks >= READ_ONCE(pwt_max_tasks.val)) {
		raw_spin_unlock(&pwt_tasks_lock);
		kmem_cache_free(pwt_task_cache, t);
		goto drop;
	}
	hash_add_rcu(pwt_tasks_hash, &t->node, t->pid);
	pwt_nr_tasks++;
	raw_spin_unlock(&pwt_tasks_lock);
	return t;

drop:
	pwt_stat_add(drops, 1);
	return NULL;
}

/*
 * sched_process_exit runs in do_exit() in the exiting task's context:
 * with preemption disabled before 7.0, under SRCU (preemptible) from 7.0
 * on. So: no sleeping, and our own RCU read section, not the caller's.
 */
static PWT_EXIT_PROBE(pwt_exit_probe)
{
	struct pwt_task *t;

	/*
	 * The entry found may be a stale one of this pid's previous owner,
	 * which the sweep may free at any time: keep the read section until
	 * we are done with it.
	 */
	rcu_read_lock();
	t = pwt_task_find(p->pid);
	if (t) {
		raw_spin_lock(&pwt_tasks_lock);
		if (!hlist_unhashed(&t->node) && t->start_time == p->start_time)
			pwt_task_unhash(t);
		raw_spin_unlock(&pwt_tasks_lock);
	}
	rcu_read_unlock();
}

/*
 * The exit probe misses tasks that exited while the module was loading and
 * entries made by a thread after its exit probe ran. Every 10 s, drop entries
 * whose pid now belongs to nobody or to a newer task.
 */
void pwt_tasks_sweep(void)
{
	struct task_struct *tsk;
	struct hlist_node *tmp;
	struct pwt_task *t;
	int bkt;

	/* Bucket by bucket: the raw lock is never held for the whole table. */
	for (bkt = 0; bkt < HASH_SIZE(pwt_tasks_hash); bkt++) {
		raw_spin_lock(&pwt_tasks_lock);
		rcu_read_lock();
		hlist_for_each_entry_safe(t, tmp, &pwt_tasks_hash[bkt], node) {
			tsk = pid_task(find_pid_ns(t->pid, &init_pid_ns), PIDTYPE_PID);
			if (!tsk || tsk->start_time != t->start_time)
				pwt_task_unhash(t);
		}
		rcu_read_unlock();
		raw_spin_unlock(&pwt_tasks_lock);
	}
}

static void pwt_find_exit_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_process_exit"))
		*(struct tracepoint **)priv = tp;
}

int pwt_tasks_init(void)
{
	int ret;

	pwt_task_cache = KMEM_CACHE(pwt_task, 0);
	if (!pwt_task_cache)
		return -ENOMEM;
	/* The tracepoint's symbols are not exported; its registry is. */
	for_each_kernel_tracepoint(pwt_find_exit_tp, &pwt_exit_tp);
	if (!pwt_exit_tp) {
		pr_warn("no sched_process_exit tracepoint: relying on the sweep\n");
		return 0;
	}
	ret = tracepoint_probe_register(pwt_exit_tp, pwt_exit_probe, NULL);
	if (ret) {
		pr_warn("sched_process_exit probe failed (%d): relying on the sweep\n", ret);
		pwt_exit_tp = NULL;
	}
	return 0;
}

/* Stop the exit probe; after this nothing but us touches the table. */
void pwt_tasks_stop(void)
{
	if (pwt_exit_tp) {
		tracepoint_probe_unregister(pwt_exit_tp, pwt_exit_probe, NULL);
		tracepoint_synchronize_unregister();
		pwt_exit_tp = NULL;
	}
}

void pwt_tasks_exit(void)
{
	struct hlist_node *tmp;
	struct pwt_task *t;
	int bkt;

	pwt_tasks_stop();
	for (bkt = 0; bkt < HASH_SIZE(pwt_tasks_hash); bkt++) {
		raw_spin_lock(&pwt_tasks_lock);
		hlist_for_each_entry_safe(t, tmp, &pwt_tasks_hash[bkt], node)
			pwt_task_unhash(t);
		raw_spin_unlock(&pwt_tasks_lock);
	}
	rcu_barrier();
	kmem_cache_destroy(pwt_task_cache);
}
