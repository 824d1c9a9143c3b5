# SPDX-License-Identifier: GPL-2.0
# torture/eio.sh: the application gets EIO or EROFS once the device fails
# (dm-error) under a writer that pwthrottle holds as an over-dirtier.
# One concern of torture.sh (see there); alone: torture.sh eio, or
# make check T=eio.
. /pwt/lib.sh

t_eio() {
	local out st w t0 thr slow held_cs
	# nodelalloc: once the device fails, ext4 aborts its journal and can
	# clean no dirty page again. With delayed allocation write() would go on
	# filling the page cache and the writer would wait in the stock throttle
	# for ever (stock behaviour, module or not); without it, write() needs a
	# journal handle and fails with EROFS instead.
	dm_scratch eio nodelalloc || return
	# Its writes held to 256 KiB/s: the writer outruns its device, which is
	# what makes it an over-dirtier. (On the map's own 40 MB/s a nodelalloc
	# writer under TCG wrote 4 MB/s, and with its device keeping up it was
	# rightly never throttled: 7.3, make check; on the debug kernel it
	# wrote 0.9 MB/s, and 1 MB/s kept up with it. At this rate the
	# flusher's writeback of its backlog fills the bound, so pwthrottle
	# holds it without queueing more: forced_pages stays 0.) The limit is
	# on vda, under the map (dm's clones keep the writer's cgroup): one on
	# the map itself makes the block layer allocate throttle data for the
	# map's queue, which the debug kernel's kmemleak reported as leaked
	# once the map was removed (6.12.118-pwtdebug, blk_throtl_init()).
	if ! slow=$(slow_cgroup pwt-eio 262144); then
		skip eio "no cgroup2 io.max on this kernel"
		umount /mnt
		"$T/pwt-dm" remove pwt-eio
		return
	fi
	tmark eio
	# 4 MiB of dirty memory at most: ext4's journal commit (data=ordered)
	# waits for all of it at 256 KiB/s, 16 s, under the guest's 30 s
	# hung-task report. (With 16 MiB jbd2 was reported blocked for 30 s on
	# 7.3, make check.)
	echo $((4 << 20)) > /proc/sys/vm/dirty_bytes
	need_load write_chunk_pages=64
	# A hog held by pwthrottle when every I/O starts failing: the errors of
	# its pages' writeback must reach the application's write() or fsync().
	start_in_cgroup "$slow" $PWT_W /mnt/eio 400 -s > /tmp/eio.out 2>&1
	w=$!
	# Held within 10 s: a writer that dirties 4 MB/s crosses the 4 MiB
	# limit in one. A debug kernel's wrote 0.9 MB/s: 60 s there.
	held_cs=1000
	! debug_kernel || held_cs=6000
	t0=$(now_cs)
	thr=0
	while [ "${thr:-0}" -lt 3 ] && [ $(($(now_cs) - t0)) -lt $held_cs ]; do
		usleep 100000
		# Read once: of two reads, an empty one (no entry yet) and a
		# "0" ended the wait at once, before any forced writeback.
		thr=$(task_field $w throttles)
	done
	log "eio: writer throttled $thr times; the device fails from now on"
	expect eio_in_writeback "pwthrottle held the writer before the device failed: throttled ${thr:-0} times, want >= 1" \
		[ "${thr:-0}" -ge 1 ]
	"$T/pwt-dm" error pwt-eio /dev/vda
	wait_max $w 120
	st=$?
	out=$(cat /tmp/eio.out)
	log "eio: writer exit $st: $out; throttles $(stat_of throttles), forced $(stat_of forced_pages), checks $(stat_of checks), skipped $(stat_of skipped)"
	expect eio_reported "the writer sees EIO or EROFS (exit $st: $out)" \
		sh -c "[ $st = 1 ] && echo '$out' | grep -qE 'Input/output error|Read-only file system'"
	unload
	vm_dirty_restore
	umount /mnt
	"$T/pwt-dm" remove pwt-eio
	rmdir "$slow"
	expect eio_dmesg_clean "no WARNING/BUG/Oops" tclean eio
}

torture_run eio ext4
