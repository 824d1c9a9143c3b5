// SPDX-License-Identifier: GPL-2.0
/*
 * pwthrottle: the per-task prediction and the over-dirtier decision.
 *
 * Plain C on purpose (see include/pwt_predict.h): the host unit tests compile
 * this very file.
 */
#include "pwt_predict.h"

#ifndef __KERNEL__
#define U64_MAX UINT64_MAX
#define U16_MAX UINT16_MAX
#define ULONG_MAX_HALF (ULONG_MAX / 2)
#else
#include <linux/limits.h>
#define ULONG_MAX_HALF (ULONG_MAX / 2)
#endif

/* Shifting a u64 by 64 or more is undefined; that many halvings is zero. */
#define PWT_PRED_BITS 64

static u64 sat_add(u64 a, u64 b)
{
	return a > U64_MAX - b ? U64_MAX : a + b;
}

void pwt_pred_init(struct pwt_pred *p, unsigned long now)
{
	p->future_dirty = 0;
	p->last_decay = now;
}

void pwt_pred_account(struct pwt_pred *p, unsigned long now,
		      unsigned long window, u64 pages)
{
	unsigned long elapsed = now - p->last_decay;
	unsigned long halvings;

	if (!window)
		return;

	/*
	 * Unsigned subtraction is right across one wrap of the tick counter.
	 * Beyond half the range we cannot tell "long ago" from "in the
	 * future" (the time_after() rule), and either way the old prediction
	 * means nothing now.
	 */
	if (elapsed > ULONG_MAX_HALF) {
		pwt_pred_init(p, now);
	} else if (elapsed >= window) {
		halvings = elapsed / window;
		if (halvings >= PWT_PRED_BITS)
			p->future_dirty = 0;
		else
			p->future_dirty >>= halvings;
		/* Keep the window phase: no drift however often we look. */
		p->last_decay += halvings * window;
	}
	p->future_dirty = sat_add(p->future_dirty, pages);
}

bool pwt_pred_idle(const struct pwt_pred *p, unsigned long now,
		   unsigned long window)
{
	unsigned long elapsed = now - p->last_decay;

	if (!window)
		return true;
	/* As in pwt_pred_account(): beyond half the range is "long ago". */
	if (elapsed > ULONG_MAX_HALF)
		return true;
	return elapsed / 2 >= window;
}

u64 pwt_pred_rate(const struct pwt_pred *p, unsigned long window,
		  unsigned long hz)
{
	if (!window)
		return 0;
	/* future_dirty < 2^64 and hz is small: divide first to not overflow. */
	return p->future_dirty / 2 / window * hz +
	       (p->future_dirty / 2 % window) * hz / window;
}

u64 pwt_judged_future(u64 own, u64 group, unsigned int writers)
{
	if (writers < PWT_GROUP_MIN_WRITERS || group < own)
		return own;
	return group;
}

bool pwt_decide(const struct pwt_global *g, u64 future_dirty, bool *over)
{
	u64 dirty = sat_add(g->nr_dirty, g->nr_writeback);
	u64 limit = *over ? g->dirty_thresh / PWT_RELEASE_DIV : g->dirty_thresh;

	*over = sat_add(dirty, future_dirty) > limit;
	/*
	 * The 2005 patch's "|| !nr_reclaimable": only pages still dirty can
	 * be written back by the task. Pages under writeback are already on
	 * their way, so they count towards the limit but not as work to do.
	 */
	return *over && g->nr_dirty;
}

u64 pwt_dev_pages(const struct pwt_dev *d, u64 ms)
{
	/* bw < 2^40 pages/s (4 EiB/s) and ms < 2^24 keep this exact. */
	if (d->bw >= 1ULL << 40 || ms >= 1ULL << 24)
		return U64_MAX;
	return d->bw * ms / 1000;
}

bool pwt_dev_hog(const struct pwt_dev *d, u64 future, u64 window_ms)
{
	return d->bw && d->backlog > pwt_dev_pages(d, PWT_CONGESTED_MS) &&
	       future > pwt_dev_pages(d, 2 * window_ms);
}

bool pwt_hold_again(const struct pwt_global *g, const struct pwt_dev *d,
		    u64 future, u64 window_ms)
{
	return pwt_dev_hog(d, future, window_ms) ||
	       future >= g->dirty_thresh / PWT_RELEASE_DIV;
}

bool pwt_decide_dev(const struct pwt_global *g, const struct pwt_dev *d,
		    u64 future, u64 window_ms, bool *over)
{
	u64 dirty = sat_add(g->nr_dirty, g->nr_writeback);
	u64 congested = pwt_dev_pages(d, PWT_CONGESTED_MS);

	if (pwt_dev_hog(d, future, window_ms)) {
		*over = true;
		return g->nr_dirty != 0;
	}
	if (d->bw && d->backlog <= congested &&
	    (dirty <= g->freerun ||
	     d->backlog <= pwt_dev_pages(d, PWT_FAST_DRAIN_MS)) &&
	    (!*over || congested >= g->freerun)) {
		*over = false;
		return false;
	}
	return pwt_decide(g, future, over);
}

u64 pwt_inflight_pages(const struct pwt_dev *d, u64 inflight_ms, u64 max_chunk)
{
	u64 inflight;

	if (!d->bw)
		return PWT_CHUNKS_IN_FLIGHT * max_chunk;
	inflight = pwt_dev_pages(d, inflight_ms);
	return inflight < PWT_CHUNKS_IN_FLIGHT * PWT_MIN_CHUNK ?
		       PWT_CHUNKS_IN_FLIGHT * PWT_MIN_CHUNK :
		       inflight;
}

u64 pwt_chunk_pages(const struct pwt_dev *d, u64 inflight_ms, u64 max_chunk)
{
	u64 chunk = pwt_inflight_pages(d, inflight_ms, max_chunk) /
		    PWT_CHUNKS_IN_FLIGHT;

	if (chunk > max_chunk)
		chunk = max_chunk;
	return chunk < PWT_MIN_CHUNK ? PWT_MIN_CHUNK : chunk;
}

u64 pwt_queue_pages(u64 chunk, u64 last_write, bool fsync_waits)
{
	if (last_write > PWT_MAX_FOLIO_PAGES)
		last_write = PWT_MAX_FOLIO_PAGES;
	if (last_write <= chunk)
		return 2 * chunk;
	return fsync_waits ? last_write : 2 * last_write;
}

bool pwt_dev_absorbed(const struct pwt_dev *d, u64 written, u64 inflight_ms,
		      u64 max_chunk)
{
	u64 limit = pwt_inflight_pages(d, inflight_ms, max_chunk);

	return written >= pwt_chunk_pages(d, inflight_ms, max_chunk) &&
	       d->writeback <= limit / PWT_CHUNKS_IN_FLIGHT &&
	       (d->backlog <= limit / 2 ||
		d->backlog <= pwt_dev_pages(d, PWT_FAST_DRAIN_MS));
}

/* ms to ticks rounded up: with HZ=100 a second is 100 ticks exactly. */
static unsigned long pwt_ms_to_ticks(unsigned long ms, unsigned long hz)
{
	return (ms * hz + 999) / 1000;
}

bool pwt_kept_up(u16 *run, const struct pwt_dev *d, u64 written, bool absorbed)
{
	u64 pages, need, sum;

	if (!absorbed || !d->bw) {
		*run = 0;
		return false;
	}
	pages = pwt_dev_pages(d, PWT_KEPT_UP_MS);
	/* More than that many pages, in whole units: never none. */
	need = pages / PWT_MIN_CHUNK + 1;
	/* 4 GiB absorbed is enough, however fast the device. */
	if (pages >= (u64)U16_MAX * PWT_MIN_CHUNK)
		need = U16_MAX;
	sum = *run + written / PWT_MIN_CHUNK;
	if (sum < need) {
		*run = sum;
		return false;
	}
	*run = 0;
	return true;
}

u64 pwt_bound_ms(u64 inflight_ms, u64 sync_ms, unsigned long seen,
		 unsigned long now, unsigned long hz)
{
	if (!sync_ms || sync_ms >= inflight_ms ||
	    !pwt_sync_ticks_left(PWT_SYNC_RECENT_MS, seen, now, hz))
		return inflight_ms;
	return sync_ms;
}

unsigned long pwt_sync_ticks_left(u64 ms, unsigned long seen, unsigned long now,
				  unsigned long hz)
{
	unsigned long ago = now - seen;
	unsigned long ticks;

	if (!ms || !seen)
		return 0;
	ticks = pwt_ms_to_ticks(ms, hz);
	/* @seen just ahead of @now: an fsync on another CPU since @now was read. */
	if (ago > ULONG_MAX_HALF)
		return ticks;
	return ago >= ticks ? 0 : ticks - ago;
}

u64 pwt_drain_us(const struct pwt_dev *d, u64 excess, u64 min_us, u64 max_us)
{
	u64 us;

	if (!d->bw)
		return max_us;
	us = excess >= U64_MAX / 1000000 ? U64_MAX : excess * 1000000 / d->bw;
	if (us < min_us)
		return min_us;
	return us > max_us ? max_us : us;
}

u64 pwt_dirty_thresh(u64 dirtyable, unsigned int ratio, u64 bytes,
		     unsigned int page_size)
{
	u64 thresh;

	if (!page_size)
		return 0;
	if (bytes) {
		thresh = bytes / page_size + (bytes % page_size != 0);
	} else {
		/*
		 * Same rounding as domain_dirty_limits(): the ratio is first
		 * scaled to "bytes per page of memory", then applied.
		 */
		u64 scaled = (u64)ratio * page_size / 100;

		if (dirtyable > U64_MAX / (scaled ? scaled : 1))
			thresh = U64_MAX / page_size;
		else
			thresh = scaled * dirtyable / page_size;
	}
	/* domain_dirty_limits() clamps to UINT_MAX, so do we. */
	if (thresh > UINT_MAX)
		thresh = UINT_MAX;
	return thresh;
}

u64 pwt_bg_thresh(u64 thresh, u64 bg_thresh)
{
	return bg_thresh >= thresh ? thresh / 2 : bg_thresh;
}

u64 pwt_freerun(u64 thresh, u64 bg_thresh)
{
	bg_thresh = pwt_bg_thresh(thresh, bg_thresh);
	/* (thresh + bg_thresh) / 2, without the sum overflowing. */
	return thresh / 2 + bg_thresh / 2 + (thresh & bg_thresh & 1);
}

u64 pwt_dirtied_pages(u64 seen, u64 now, unsigned int page_shift)
{
	return now > seen ? (now - seen) >> page_shift : 0;
}

u64 pwt_count_from(u64 now, int nr_dirtied, unsigned int page_shift)
{
	/* A redirty in the task's own writeback can take nr_dirtied below 0. */
	u64 bytes = nr_dirtied > 0 ? (u64)nr_dirtied << page_shift : 0;

	return now > bytes ? now - bytes : 0;
}

u64 pwt_evict_want(u64 nr_tasks, u64 max_tasks, u64 chain_len)
{
	u64 table = 0, chain = 0;

	if (nr_tasks >= max_tasks)
		table = nr_tasks - max_tasks + 1;
	if (chain_len >= PWT_CHAIN_MAX)
		chain = chain_len - PWT_CHAIN_MAX + 1;
	return table > chain ? table : chain;
}

enum pwt_act pwt_act(bool may_writeback, bool async)
{
	if (!may_writeback)
		return PWT_ACT_SKIP;
	return async ? PWT_ACT_EAGAIN : PWT_ACT_WRITEBACK;
}
