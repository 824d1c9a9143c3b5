/* SPDX-License-Identifier: GPL-2.0 */
/* Types of pwthrottle's trace events, shared with the module's code. */
#ifndef _PWT_TRACE_TYPES_H
#define _PWT_TRACE_TYPES_H

/*
 * How a forced writeback's waits for the device (before and after queueing
 * two chunks) ended: the device is down to half of inflight_ms of its
 * bandwidth under writeback (DONE); it was at a quarter of it right after
 * our chunks were queued, with little else waiting, for the third forced
 * writeback in a row, so it keeps up with the task (KEPT_UP, no second
 * wait); max_pause_ms for both (DEADLINE; the task is held again after its
 * next few pages); the task is no longer over or has nothing dirty left to
 * write (NOT_OVER), a fatal signal (KILLED), rmmod began (UNLOADING).
 * Nothing is queued if the first wait ends otherwise than DONE. Values are
 * an interface (tools/pwtop): append only.
 */
enum pwt_wait_end {
	PWT_WAIT_DONE,
	PWT_WAIT_NOT_OVER,
	PWT_WAIT_DEADLINE,
	PWT_WAIT_KILLED,
	PWT_WAIT_UNLOADING,
	PWT_WAIT_KEPT_UP,
};

#endif /* _PWT_TRACE_TYPES_H */
