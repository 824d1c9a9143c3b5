# SPDX-License-Identifier: GPL-2.0
# torture/eio.sh: the application gets EIO or EROFS once the device fails
# under a writer in forced writeback (dm-error).
# One concern of torture.sh (see there); alone: torture.sh eio, or
# make check T=eio.
. /pwt/lib.sh

t_eio() {
	local out st w t0 thr
	# nodelalloc: once the device fails, ext4 aborts its journal and can
	# clean no dirty page again. With delayed allocation write() would go on
	# filling the page cache and the writer would wait in the stock throttle
	# for ever (stock behaviour, module or not); without it, write() needs a
	# journal handle and fails with EROFS instead.
	dm_scratch eio nodelalloc || return
	tmark eio
	echo $((16 << 20)) > /proc/sys/vm/dirty_bytes
	need_load write_chunk_pages=64
	# A hog in forced writeback when every I/O starts failing: pwthrottle
	# starts writeback that fails, and must leave the error for the
	# application's write() or fsync() to see.
	$PWT_W /mnt/eio 400 -s > /tmp/eio.out 2>&1 &
	w=$!
	t0=$(now_cs)
	thr=0
	while [ "${thr:-0}" -lt 3 ] && [ $(($(now_cs) - t0)) -lt 1000 ]; do
		usleep 100000
		# Read once: of two reads, an empty one (no entry yet) and a
		# "0" ended the wait at once, before any forced writeback.
		thr=$(task_field $w throttles)
	done
	log "eio: writer throttled $thr times; the device fails from now on"
	expect eio_in_writeback "the writer was in forced writeback when the device failed: throttled ${thr:-0} times, want >= 1" \
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
	expect eio_dmesg_clean "no WARNING/BUG/Oops" tclean eio
}

torture_run eio ext4
