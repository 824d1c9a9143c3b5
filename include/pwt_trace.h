/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pwthrottle's trace events, in tracefs under events/pwthrottle/:
 *
 *   pwt_decision  one per decision, that is every ratelimit_pages pages a
 *                 task dirties (8 once it is over), never per call: the
 *                 task's prediction, the global numbers it was weighed
 *                 against and the verdict
 *   pwt_throttle  one per forced writeback, at its end: the pages written
 *                 back, how long the task was held and why the wait ended
 *
 * Both fire in the dirtying task's own context, so pid and comm are those
 * of current. Field names and types are an interface: tools/pwtop reads
 * them at the offsets the format files give. Off, each event costs one
 * static branch.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM pwthrottle

/* Outside the multi-read guard: every pass may need the types. */
#include "pwt_trace_types.h"

#if !defined(_PWT_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _PWT_TRACE_H

#include <linux/tracepoint.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/math64.h>
#include "pwt_predict.h"

/* Numbers, not names, in the format files' print fmt. */
TRACE_DEFINE_ENUM(PWT_WAIT_DONE);
TRACE_DEFINE_ENUM(PWT_WAIT_NOT_OVER);
TRACE_DEFINE_ENUM(PWT_WAIT_DEADLINE);
TRACE_DEFINE_ENUM(PWT_WAIT_KILLED);
TRACE_DEFINE_ENUM(PWT_WAIT_UNLOADING);
TRACE_DEFINE_ENUM(PWT_WAIT_KEPT_UP);

/*
 * The event macros are laid out the way checkpatch wants them, which
 * clang-format cannot reproduce.
 */
/* clang-format off */

/*
 * @future_dirty: the task's prediction, pages
 * @dirtied: pages the task dirtied since its previous decision
 * @g: nr_dirty, nr_writeback and dirty_thresh, pages
 * @d: the writer's device: bandwidth (pages/s, 0 = not measured yet) and
 *	pages dirty or under writeback on it
 * @over: the verdict, predicted over-dirtier
 * @throttle: over with dirty memory to write: writeback is forced once the
 *	task has dirtied write_chunk_pages since its last forced writeback
 */
TRACE_EVENT(pwt_decision,
	    TP_PROTO(u64 future_dirty, unsigned int dirtied,
		     const struct pwt_global *g, const struct pwt_dev *d,
		     bool over, bool throttle),
	    TP_ARGS(future_dirty, dirtied, g, d, over, throttle),
	    TP_STRUCT__entry(__field(u64, future_dirty)
			     __field(u64, nr_dirty)
			     __field(u64, nr_writeback)
			     __field(u64, dirty_thresh)
			     __field(u64, bw)
			     __field(u64, backlog)
			     __field(pid_t, pid)
			     __field(unsigned int, dirtied)
			     __field(bool, over)
			     __field(bool, throttle)
			     __array(char, comm, TASK_COMM_LEN)),
	    TP_fast_assign(__entry->future_dirty = future_dirty;
			   __entry->nr_dirty = g->nr_dirty;
			   __entry->nr_writeback = g->nr_writeback;
			   __entry->dirty_thresh = g->dirty_thresh;
			   __entry->bw = d->bw;
			   __entry->backlog = d->backlog;
			   __entry->pid = current->pid;
			   __entry->dirtied = dirtied;
			   __entry->over = over;
			   __entry->throttle = throttle;
			   memcpy(__entry->comm, current->comm, TASK_COMM_LEN);),
	    TP_printk("pid=%d comm=%s future_dirty=%llu dirtied=%u nr_dirty=%llu nr_writeback=%llu dirty_thresh=%llu bw=%llu backlog=%llu over=%d throttle=%d",
		      __entry->pid, __entry->comm, __entry->future_dirty,
		      __entry->dirtied, __entry->nr_dirty,
		      __entry->nr_writeback, __entry->dirty_thresh,
		      __entry->bw, __entry->backlog,
		      __entry->over, __entry->throttle));

/*
 * @pages: pages the forced writeback started
 * @wait_ns: time the task was held, starting the writeback included
 * @reason: why the wait for the device ended
 * @d: the device when it ended: bandwidth (pages/s, 0 = not measured yet)
 *	and pages under writeback on it
 * @limit: the bound on those pages (inflight_ms of the bandwidth)
 */
TRACE_EVENT(pwt_throttle,
	    TP_PROTO(long pages, u64 wait_ns, enum pwt_wait_end reason,
		     const struct pwt_dev *d, u64 limit),
	    TP_ARGS(pages, wait_ns, reason, d, limit),
	    TP_STRUCT__entry(__field(long, pages)
			     __field(u64, wait_us)
			     __field(u64, bw)
			     __field(u64, writeback)
			     __field(u64, limit)
			     __field(pid_t, pid)
			     __field(unsigned int, reason)
			     __array(char, comm, TASK_COMM_LEN)),
	    TP_fast_assign(__entry->pages = pages;
			   __entry->wait_us = div_u64(wait_ns, NSEC_PER_USEC);
			   __entry->bw = d->bw;
			   __entry->writeback = d->writeback;
			   __entry->limit = limit;
			   __entry->pid = current->pid;
			   __entry->reason = reason;
			   memcpy(__entry->comm, current->comm, TASK_COMM_LEN);),
	    TP_printk("pid=%d comm=%s pages=%ld wait_us=%llu reason=%s bw=%llu writeback=%llu limit=%llu",
		      __entry->pid, __entry->comm, __entry->pages,
		      __entry->wait_us,
		      __print_symbolic(__entry->reason,
				       { PWT_WAIT_DONE, "done" },
				       { PWT_WAIT_NOT_OVER, "not_over" },
				       { PWT_WAIT_DEADLINE, "deadline" },
				       { PWT_WAIT_KILLED, "killed" },
				       { PWT_WAIT_UNLOADING, "unloading" },
				       { PWT_WAIT_KEPT_UP, "kept_up" }),
		      __entry->bw, __entry->writeback, __entry->limit));

/* clang-format on */

#endif /* _PWT_TRACE_H */

/* Out of the kernel tree: found through Kbuild's -I$(src)/include. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE pwt_trace
#include <trace/define_trace.h>
