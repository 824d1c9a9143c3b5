/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pwtop: what the BPF side (pwtop.bpf.c) and the program (pwtop.c) share.
 *
 * The BPF programs are plain tracepoint programs: their context is the raw
 * trace record that tracefs describes in events/SYSTEM/EVENT/format. pwtop
 * reads the offsets of the fields it needs from those files before loading,
 * so neither vmlinux BTF nor module BTF is needed, and a field that moves
 * between kernels is still found.
 */
#ifndef PWTOP_H
#define PWTOP_H

#include <linux/types.h>

#define PWTOP_COMM_LEN 16
#define PWTOP_MAX_TASKS 8192

/* One field of a trace record: where it is and how wide (1, 2, 4 or 8). */
struct pwtop_field {
	__u32 off;
	__u32 size;
};

/* The fields pwtop uses, per event; set in the BPF .rodata before load. */
struct pwtop_layout {
	/* pwthrottle:pwt_decision */
	struct pwtop_field dec_future_dirty;
	struct pwtop_field dec_dirtied;
	struct pwtop_field dec_over;
	struct pwtop_field dec_throttle;
	/* pwthrottle:pwt_throttle */
	struct pwtop_field thr_pages;
	struct pwtop_field thr_wait_us;
	struct pwtop_field thr_reason;
	/* writeback:balance_dirty_pages */
	struct pwtop_field bdp_pause;
	struct pwtop_field bdp_task_ratelimit;
};

/* Reasons a pwthrottle wait ends: the kernel's enum pwt_wait_end. */
#define PWTOP_NR_ENDS 6

/*
 * What pwtop counts per task (thread), keyed by pid. Only the task itself
 * writes its entry (every event fires in the dirtier's context); counters
 * only grow, pwtop reports differences between two reads.
 */
struct pwtop_task {
	char comm[PWTOP_COMM_LEN];
	__u32 pid;
	__u32 tgid;
	/* pwt_decision */
	__u64 decisions;
	__u64 dirtied;		/* pages, summed over decisions */
	__u64 future_dirty;	/* the prediction at the last decision */
	__u64 over;		/* the verdict at the last decision */
	__u64 throttle_verdicts;	/* decisions with throttle=1 */
	/* pwt_throttle */
	__u64 throttles;
	__u64 throttle_pages;
	__u64 throttle_us;
	__u64 ends[PWTOP_NR_ENDS];
	/* writeback:balance_dirty_pages */
	__u64 bdp_events;
	__u64 bdp_pauses;	/* events with pause > 0: the task slept */
	__u64 bdp_pause_ms;
	__u64 bdp_task_ratelimit;	/* KB/s, at the last event */
};

#endif /* PWTOP_H */
