// SPDX-License-Identifier: GPL-2.0
/*
 * pwthrottle per-task state: a hashtable of struct pwt_task keyed by pid,
 * and one of struct pwt_group keyed by the group's struct pid.
 *
 * Lookups run under RCU on every hooked call; inserts and removals take
 * pwt_tasks_lock, which is only ever taken in process context (the write
 * path, the sched_process_exit probe, the sweep work), never from an
 * interrupt, so no irq-disabling variant is needed. It is a raw spinlock
 * because the exit probe runs with preemption disabled before 7.0, and on
 * PREEMPT_RT a spinlock_t is a sleeping lock there. Every hold is short:
 * one hash chain (the sweep takes it per bucket; max_tasks is capped so a
 * chain stays short). Entries are freed with call_rcu(), evicted ones with
 * call_srcu() then call_rcu(); rmmod waits for them with srcu_barrier() and
 * rcu_barrier(). We do not use kfree_rcu(): before 6.12 nothing lets a
 * module wait for its batched frees before destroying the slab cache.
 *
 * Who may remove an entry, and why the owner can keep using its pointer
 * after rcu_read_unlock() while it sleeps in forced writeback:
 *  - the exit probe removes the exiting task's own entry: the owner is the
 *    one exiting, so it is not in the write path any more;
 *  - the sweep removes entries whose task is gone or whose pid was reused;
 *  - a reused pid's new owner replaces the stale entry, it never adopts it;
 *  - eviction removes idle entries of live tasks when the table is full or
 *    more than half full. Their owner may be inside the wrapper right now,
 *    so an evicted entry is freed only after an SRCU grace period of
 *    pwt_task_srcu (which the wrapper holds around pwt_throttle(), where
 *    the entry is used) and then an RCU one (for lookups); the owner makes
 *    a new entry at its next call. Not pwt_srcu, which the wrapper also
 *    holds while the original sleeps: a writer stuck there for good (a
 *    hung FUSE daemon, a suspended device) would keep every entry evicted
 *    meanwhile from being freed, and the table from staying bounded;
 *  - module exit, after synchronize_srcu() has waited for every owner.
 * call_srcu() takes a spinlock_t, a sleeping lock on PREEMPT_RT: evicted
 * entries are collected under the raw lock and queued after it is dropped.
 *
 * A group lives as long as a task entry points to it (@members): the entry
 * gives its count back when it is freed, so an owner inside the wrapper can
 * use its group as long as its entry. A group without members is unhashed
 * by the sweep (under the lock, where members are added) and freed after a
 * grace period, with the reference on its struct pid.
 */
#include <linux/hashtable.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/tracepoint.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/string.h>
#include <linux/jiffies.h>
#include <linux/sched/signal.h>
#include <linux/srcu.h>
#include "pwt_compat.h"
#include "pwthrottle.h"

DEFINE_HASHTABLE(pwt_tasks_hash, PWT_HASH_BITS);
static DEFINE_HASHTABLE(pwt_groups_hash, PWT_HASH_BITS);
static DEFINE_RAW_SPINLOCK(pwt_tasks_lock);
static unsigned int pwt_nr_tasks;	/* under pwt_tasks_lock */
static unsigned int pwt_nr_groups;	/* under pwt_tasks_lock */
static struct kmem_cache *pwt_task_cache;
static struct tracepoint *pwt_exit_tp;

unsigned int pwt_tasks_count(void)
{
	return READ_ONCE(pwt_nr_tasks);
}

/*
 * Entries evicted per pass over one chain with the lock held: their frees
 * are queued once it is dropped, from an array on the stack.
 */
#define PWT_EVICT_BATCH 16

unsigned int pwt_groups_count(void)
{
	return READ_ONCE(pwt_nr_groups);
}

/*
 * As allocated: an entry is an object of its own cache, a group comes from
 * the kmalloc bucket its size rounds up to. There are at most max_tasks of
 * each (pwt_task_new(), pwt_task_regroup()).
 */
void pwt_tasks_memory(struct pwt_memory *mem)
{
	mem->task_bytes = kmem_cache_size(pwt_task_cache);
	mem->group_bytes = kmalloc_size_roundup(sizeof(struct pwt_group));
	mem->hash_bytes = sizeof(pwt_tasks_hash) + sizeof(pwt_groups_hash);
}

static void pwt_task_free_rcu(struct rcu_head *rcu)
{
	struct pwt_task *t = container_of(rcu, struct pwt_task, rcu);

	if (t->grp)
		atomic_dec(&t->grp->members);
	kmem_cache_free(pwt_task_cache, t);
}

/* An SRCU callback: the owner has left the wrapper; now wait for lookups. */
static void pwt_task_evicted_srcu(struct rcu_head *rcu)
{
	call_rcu(rcu, pwt_task_free_rcu);
}

static void pwt_group_free_rcu(struct rcu_head *rcu)
{
	struct pwt_group *g = container_of(rcu, struct pwt_group, rcu);

	put_pid(g->key);
	kfree(g);
}

/*
 * Caller holds pwt_tasks_lock; @t is hashed. It stops being one of its
 * group's writers now, not when freed: a grace period later, the next
 * process of a shell loop would be counted with the one that exited.
 */
static void pwt_task_unlink(struct pwt_task *t)
{
	hlist_del_init_rcu(&t->node);
	pwt_nr_tasks--;
	if (t->grp)
		atomic_dec(&t->grp->writers);
}

/* Caller holds pwt_tasks_lock; @t is hashed. */
static void pwt_task_unhash(struct pwt_task *t)
{
	pwt_task_unlink(t);
	call_rcu(&t->rcu, pwt_task_free_rcu);
}

/*
 * Has @t's owner reached no decision for a window (its pages go into the
 * prediction at decisions, every ratelimit_pages: fewer than that, and it
 * is as good as idle)? Read without the owner's cooperation: a stale value
 * only makes an entry look busy or idle one call early, and an evicted
 * owner simply starts a new entry.
 */
static bool pwt_task_idle(const struct pwt_task *t, unsigned long now)
{
	struct pwt_pred pred = { .last_decay = READ_ONCE(t->pred.last_decay) };

	return !READ_ONCE(t->busy) && pwt_pred_idle(&pred, now, pwt_window());
}

/*
 * Unhash up to @want (at most PWT_EVICT_BATCH) entries of chain @head, only
 * idle ones if @idle_only, into @out and return how many. Caller holds
 * pwt_tasks_lock and frees them (pwt_unlinked_free()) after dropping it.
 */
static int pwt_unlink_batch(struct hlist_head *head, struct pwt_task **out,
			    int want, bool idle_only)
{
	unsigned long now = jiffies;
	struct hlist_node *tmp;
	struct pwt_task *t;
	int n = 0;

	want = min(want, PWT_EVICT_BATCH);
	hlist_for_each_entry_safe(t, tmp, head, node) {
		if (n >= want)
			break;
		if (idle_only && !pwt_task_idle(t, now))
			continue;
		pwt_task_unlink(t);
		out[n++] = t;
	}
	return n;
}

static int pwt_evict_idle(struct hlist_head *head, struct pwt_task **out,
			  int want)
{
	return pwt_unlink_batch(head, out, want, true);
}

/* Free @n unlinked entries once no owner can be using them. */
static void pwt_unlinked_free(struct pwt_task **v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		call_srcu(&pwt_task_srcu, &v[i]->rcu, pwt_task_evicted_srcu);
}

static void pwt_evicted_free(struct pwt_task **v, int n)
{
	pwt_unlinked_free(v, n);
	pwt_stat_add(evictions, n);
}

/*
 * pwthrottle was switched off: drop every entry. Their owners may be
 * inside pwt_throttle(), which they entered while it was on, so each is
 * freed as an evicted one is. An entry made in that same moment either
 * goes in before this passes its chain, and goes with it, or sees the
 * switch under the lock and does not go in (pwt_task_new()).
 */
void pwt_tasks_forget(void)
{
	struct pwt_task *batch[PWT_EVICT_BATCH];
	int bkt, n;

	for (bkt = 0; bkt < HASH_SIZE(pwt_tasks_hash); bkt++) {
		do {
			raw_spin_lock(&pwt_tasks_lock);
			n = pwt_unlink_batch(&pwt_tasks_hash[bkt], batch,
					     PWT_EVICT_BATCH, false);
			raw_spin_unlock(&pwt_tasks_lock);
			pwt_unlinked_free(batch, n);
		} while (n == PWT_EVICT_BATCH);
	}
}

/*
 * Does chain @head hold an entry eviction could take? And *@len, how many
 * it holds. Without the lock: a hint, made again under it (for the lock
 * holder the RCU walk is as good as a plain one: one walk serves both).
 */
static bool pwt_chain_has_idle(struct hlist_head *head, unsigned int *len)
{
	unsigned long now = jiffies;
	struct pwt_task *t;
	bool idle = false;

	*len = 0;
	rcu_read_lock();
	hlist_for_each_entry_rcu(t, head, node) {
		(*len)++;
		if (pwt_task_idle(t, now))
			idle = true;
	}
	rcu_read_unlock();
	return idle;
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
 * The slow half of pwt_task_get() (pwthrottle.h): the current task has no
 * entry of its own; @stale_seen, its pid has the entry of a previous owner.
 * Makes one. Returns NULL when the table or this pid's chain is full, when
 * memory is short, or when pwthrottle was switched off meanwhile: that task
 * is simply not throttled by us, and the stock throttle still applies.
 * GFP_NOWAIT because we may hold i_rwsem and sb freeze protection, and
 * because a missing entry is harmless.
 */
struct pwt_task *pwt_task_new(bool stale_seen)
{
	struct pwt_task *evicted[PWT_EVICT_BATCH];
	struct task_struct *tsk = current;
	struct pwt_task *t, *stale;
	struct hlist_head *head;
	unsigned int len;
	int nevict = 0;
	u64 want;

	/*
	 * The table or this pid's chain full (PWT_CHAIN_MAX): go on only if
	 * there will be room, from the dead previous owner's entry or an idle
	 * one in this chain (looked for here without the lock, so a fork
	 * storm of busy writers costs no allocation).
	 */
	head = &pwt_tasks_hash[hash_min(tsk->pid, HASH_BITS(pwt_tasks_hash))];
	if (!pwt_chain_has_idle(head, &len) && !stale_seen &&
	    (len >= PWT_CHAIN_MAX ||
	     READ_ONCE(pwt_nr_tasks) >= READ_ONCE(pwt_max_tasks.val)))
		goto drop;
	t = kmem_cache_zalloc(pwt_task_cache, GFP_NOWAIT | __GFP_NOWARN);
	if (!t)
		goto drop;
	t->pid = tsk->pid;
	t->tgid = tsk->tgid;
	t->start_time = tsk->start_time;
	strscpy(t->comm, tsk->comm, sizeof(t->comm));
	pwt_pred_init(&t->pred, jiffies);
	/*
	 * Not the bytes of a whole life: an entry evicted while its task was
	 * idle is made anew at its next write.
	 */
	t->written_seen = pwt_count_from(pwt_written_bytes(tsk), tsk->nr_dirtied,
					 PAGE_SHIFT);

	raw_spin_lock(&pwt_tasks_lock);
	/*
	 * Switched off since the caller looked: pwt_tasks_forget() runs after
	 * the switch and takes this lock chain by chain, so an entry added
	 * now, after it went past this chain, would stay and be charged what
	 * the task writes while off.
	 */
	if (!READ_ONCE(pwt_ratio_centisecs)) {
		raw_spin_unlock(&pwt_tasks_lock);
		kmem_cache_free(pwt_task_cache, t);
		return NULL;
	}
	/* A previous owner of this pid is dead: its entry goes. */
	stale = pwt_task_find(tsk->pid);
	if (stale)
		pwt_task_unhash(stale);
	/* At most PWT_CHAIN_MAX entries: this walk is short too. */
	pwt_chain_has_idle(head, &len);
	want = pwt_evict_want(pwt_nr_tasks, READ_ONCE(pwt_max_tasks.val), len);
	if (want)
		nevict = pwt_evict_idle(head, evicted,
					min_t(u64, want, PWT_EVICT_BATCH));
	if ((u64)nevict < want) {
		raw_spin_unlock(&pwt_tasks_lock);
		pwt_evicted_free(evicted, nevict);
		kmem_cache_free(pwt_task_cache, t);
		goto drop;
	}
	hash_add_rcu(pwt_tasks_hash, &t->node, t->pid);
	pwt_nr_tasks++;
	raw_spin_unlock(&pwt_tasks_lock);
	pwt_evicted_free(evicted, nevict);
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
 * The exit probe misses the entry of a thread that exec() from another
 * thread of its process turned into the leader (de_thread(): it goes on
 * under the leader's pid, its own entry left behind). Every 10 s, drop
 * entries whose pid now belongs to nobody or to a newer task; when the
 * table is more than half full, also evict idle ones, so that a new writer
 * finds room without having to evict on its own write path; and free the
 * groups left without members.
 */
void pwt_tasks_sweep(void)
{
	struct pwt_task *evicted[PWT_EVICT_BATCH];
	struct task_struct *tsk;
	struct hlist_node *tmp;
	struct pwt_group *g;
	struct pwt_task *t;
	int bkt, n;
	bool evict;

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
		evict = pwt_nr_tasks > READ_ONCE(pwt_max_tasks.val) / 2;
		n = evict ? pwt_evict_idle(&pwt_tasks_hash[bkt], evicted,
					   PWT_EVICT_BATCH) : 0;
		raw_spin_unlock(&pwt_tasks_lock);
		pwt_evicted_free(evicted, n);
	}
	for (bkt = 0; bkt < HASH_SIZE(pwt_groups_hash); bkt++) {
		raw_spin_lock(&pwt_tasks_lock);
		hlist_for_each_entry_safe(g, tmp, &pwt_groups_hash[bkt], node) {
			if (atomic_read(&g->members))
				continue;
			hlist_del_init_rcu(&g->node);
			pwt_nr_groups--;
			call_rcu(&g->rcu, pwt_group_free_rcu);
		}
		raw_spin_unlock(&pwt_tasks_lock);
	}
}

/* What current is grouped by now; NULL: on its own. */
static struct pid *pwt_group_key(void)
{
	switch (READ_ONCE(pwt_group_by.val)) {
	case PWT_GROUP_PROCESS:
		return task_tgid(current);
	case PWT_GROUP_JOB:
		return task_pgrp(current);
	}
	return NULL;
}

/* Caller holds pwt_tasks_lock, or the RCU read lock for a bare lookup. */
static struct pwt_group *pwt_group_find(struct pid *key)
{
	struct pwt_group *g;

	hash_for_each_possible_rcu(pwt_groups_hash, g, node, (unsigned long)key)
		if (g->key == key)
			return g;
	return NULL;
}

/*
 * Join the group current belongs to now (its first decision, or after
 * setsid(), setpgid() or a change of group_by), leaving the old one. With
 * no memory or max_tasks groups already, the task leaves the old one all
 * the same (it is no writer of that group any more) and stays on its own;
 * the next decision tries again.
 */
static struct pwt_group *pwt_task_regroup(struct pwt_task *t)
{
	struct pwt_group *g, *old, *ng = NULL;
	struct pid *key;
	bool hashed;

	/* Allocate only if the group is new and there is room for it. */
	rcu_read_lock();
	key = pwt_group_key();
	g = key ? pwt_group_find(key) : NULL;
	rcu_read_unlock();
	if (key && !g && READ_ONCE(pwt_nr_groups) < READ_ONCE(pwt_max_tasks.val))
		ng = kzalloc(sizeof(*ng), GFP_NOWAIT | __GFP_NOWARN);
	/* Already on its own, and nothing to join: no need for the lock. */
	if (key && !g && !ng && !t->grp)
		return NULL;

	raw_spin_lock(&pwt_tasks_lock);
	/*
	 * Again under the lock: setpgid() by another task may have moved us
	 * and dropped the old pgrp (so read it under RCU), and the sweep may
	 * have freed the group found above.
	 */
	rcu_read_lock();
	key = pwt_group_key();
	g = key ? pwt_group_find(key) : NULL;
	if (key && !g && ng && pwt_nr_groups < READ_ONCE(pwt_max_tasks.val)) {
		ng->key = get_pid(key);
		ng->nr = pid_nr(key);
		spin_lock_init(&ng->lock);
		pwt_pred_init(&ng->pred, jiffies);
		hash_add_rcu(pwt_groups_hash, &ng->node, (unsigned long)key);
		pwt_nr_groups++;
		g = ng;
		ng = NULL;
	}
	rcu_read_unlock();
	/* An entry unhashed meanwhile (evicted, stale) writes for no group. */
	hashed = !hlist_unhashed(&t->node);
	if (g) {
		atomic_inc(&g->members);
		if (hashed)
			atomic_inc(&g->writers);
	}
	old = t->grp;
	WRITE_ONCE(t->grp, g);
	if (old) {
		atomic_dec(&old->members);
		if (hashed)
			atomic_dec(&old->writers);
	}
	raw_spin_unlock(&pwt_tasks_lock);
	kfree(ng);
	return g;
}

/*
 * Add @pages, dirtied by current since its last decision, to its group's
 * prediction and return that prediction (0 when it is on its own), and in
 * *@writers the group's writers: tasks with a hashed entry, i.e. that
 * dirtied pages and have neither exited (the exit probe) nor been evicted
 * as idle. Eviction waits for a full table or, at the sweep, a half-full
 * one: a thread that wrote once and idles since stays a writer until then,
 * while the pages it dirtied halve in the group's prediction every window.
 * Called at decisions only (every ratelimit_pages, 8 once over), so the
 * group's lock is taken once per 8 to 32 pages of each member, not on
 * every call.
 */
u64 pwt_group_account(struct pwt_task *t, unsigned int pages,
		      unsigned int *writers)
{
	struct pwt_group *g = t->grp;
	u64 future;

	*writers = 1;
	/* Only a pointer compare: the key is not dereferenced here. */
	if (unlikely((g ? g->key : NULL) != pwt_group_key()))
		g = pwt_task_regroup(t);
	if (!g)
		return 0;
	spin_lock(&g->lock);
	pwt_pred_account(&g->pred, jiffies, pwt_window(), pages);
	future = g->pred.future_dirty;
	spin_unlock(&g->lock);
	*writers = atomic_read(&g->writers);
	return future;
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
	struct pwt_group *g;
	struct pwt_task *t;
	int bkt;

	/*
	 * A write of 0 to the dirty_ratio_centisecs parameter empties the
	 * table (pwt_tasks_forget()), and the parameter's sysfs file outlives
	 * our exit: it goes only when the module is freed. Such a store holds
	 * the parameter lock throughout; holding it here, no store is halfway
	 * through (entries unlinked, their frees not yet queued) when we wait
	 * for the frees below, and any later one finds the table empty.
	 */
	kernel_param_lock(THIS_MODULE);
	pwt_tasks_stop();
	for (bkt = 0; bkt < HASH_SIZE(pwt_tasks_hash); bkt++) {
		raw_spin_lock(&pwt_tasks_lock);
		hlist_for_each_entry_safe(t, tmp, &pwt_tasks_hash[bkt], node)
			pwt_task_unhash(t);
		raw_spin_unlock(&pwt_tasks_lock);
	}
	/* Evicted entries go through SRCU, then RCU; the others through RCU. */
	srcu_barrier(&pwt_task_srcu);
	rcu_barrier();
	/* Every entry is freed, so no group has members or readers left. */
	hash_for_each_safe(pwt_groups_hash, bkt, tmp, g, node) {
		hash_del(&g->node);
		put_pid(g->key);
		kfree(g);
	}
	kmem_cache_destroy(pwt_task_cache);
	kernel_param_unlock(THIS_MODULE);
}
