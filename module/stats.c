// SPDX-License-Identifier: GPL-2.0
/*
 * pwthrottle's counters: per CPU, so the write path adds to a cacheline of
 * its own CPU and never to a shared one. Written by main.c and task.c
 * (pwt_stat_add()), summed for debugfs' "stats". The sum is not a
 * snapshot: a counter may move while the others are read, as the kernel's
 * own per-CPU event counters do.
 */
#include <linux/percpu.h>
#include <linux/string.h>
#include "pwthrottle.h"

DEFINE_PER_CPU(struct pwt_stats, pwt_stats);

void pwt_stats_sum(struct pwt_stats *sum)
{
	int cpu;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		const struct pwt_stats *s = per_cpu_ptr(&pwt_stats, cpu);

		sum->calls += READ_ONCE(s->calls);
		sum->checks += READ_ONCE(s->checks);
		sum->throttles += READ_ONCE(s->throttles);
		sum->forced_pages += READ_ONCE(s->forced_pages);
		sum->async_eagain += READ_ONCE(s->async_eagain);
		sum->skipped += READ_ONCE(s->skipped);
		sum->drops += READ_ONCE(s->drops);
		sum->evictions += READ_ONCE(s->evictions);
		sum->sync_bounded += READ_ONCE(s->sync_bounded);
		sum->sync_held += READ_ONCE(s->sync_held);
	}
}
