// SPDX-License-Identifier: GPL-2.0
/*
 * pwtop's BPF side: three tracepoint programs that count, per task, what
 * pwthrottle decided and did and how often the stock balance_dirty_pages()
 * made the task sleep. The record layout comes from pwtop (see pwtop.h).
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "pwtop.h"

char LICENSE[] SEC("license") = "GPL";

/* Filled in by pwtop from the tracefs format files; read-only once loaded. */
const volatile struct pwtop_layout layout;

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, PWTOP_MAX_TASKS);
	__type(key, __u32);
	__type(value, struct pwtop_task);
} tasks SEC(".maps");

/* A field of the trace record @ctx, zero-extended. */
static __always_inline __u64 field(void *ctx, __u32 off, __u32 size)
{
	__u64 v = 0;

	switch (size) {
	case 1:
		bpf_probe_read_kernel(&v, 1, ctx + off);
		break;
	case 2:
		bpf_probe_read_kernel(&v, 2, ctx + off);
		break;
	case 4:
		bpf_probe_read_kernel(&v, 4, ctx + off);
		break;
	case 8:
		bpf_probe_read_kernel(&v, 8, ctx + off);
		break;
	}
	return v;
}

#define FIELD(ctx, name) field(ctx, layout.name.off, layout.name.size)

/* The current task's entry, created on its first event. */
static __always_inline struct pwtop_task *task_entry(void)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = (__u32)id;
	struct pwtop_task *t, zero = {};

	t = bpf_map_lookup_elem(&tasks, &pid);
	if (!t) {
		zero.pid = pid;
		zero.tgid = id >> 32;
		bpf_map_update_elem(&tasks, &pid, &zero, BPF_NOEXIST);
		t = bpf_map_lookup_elem(&tasks, &pid);
		if (!t)
			return NULL;
	}
	/* Each time: exec changes it. */
	bpf_get_current_comm(t->comm, sizeof(t->comm));
	return t;
}

SEC("tracepoint/pwthrottle/pwt_decision")
int pwt_decision(void *ctx)
{
	struct pwtop_task *t = task_entry();

	if (!t)
		return 0;
	t->decisions++;
	t->dirtied += FIELD(ctx, dec_dirtied);
	t->future_dirty = FIELD(ctx, dec_future_dirty);
	t->over = FIELD(ctx, dec_over);
	if (FIELD(ctx, dec_throttle))
		t->throttle_verdicts++;
	return 0;
}

SEC("tracepoint/pwthrottle/pwt_throttle")
int pwt_throttle(void *ctx)
{
	struct pwtop_task *t = task_entry();
	__u64 reason;

	if (!t)
		return 0;
	t->throttles++;
	t->throttle_pages += FIELD(ctx, thr_pages);
	t->throttle_us += FIELD(ctx, thr_wait_us);
	reason = FIELD(ctx, thr_reason);
	if (reason < PWTOP_NR_ENDS)
		t->ends[reason]++;
	return 0;
}

SEC("tracepoint/writeback/balance_dirty_pages")
int balance_dirty_pages(void *ctx)
{
	struct pwtop_task *t = task_entry();
	__s64 pause;

	if (!t)
		return 0;
	t->bdp_events++;
	/* A long, in ms; zero or negative when the task did not sleep. */
	pause = (__s64)FIELD(ctx, bdp_pause);
	if (pause > 0) {
		t->bdp_pauses++;
		t->bdp_pause_ms += pause;
	}
	t->bdp_task_ratelimit = FIELD(ctx, bdp_task_ratelimit);
	return 0;
}
