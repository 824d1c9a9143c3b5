# SPDX-License-Identifier: GPL-2.0
# torture/enospc.sh: the application gets ENOSPC from write()/fsync() while
# pwthrottle has its writer in forced writeback.
# One concern of torture.sh (see there); alone: torture.sh enospc, or
# make check T=enospc.
. /pwt/lib.sh

t_enospc() {
	local free out st
	tmark enospc
	# A 16 MiB dirty limit: the writer is predicted over, and in forced
	# writeback, long before the disk is full.
	echo $((16 << 20)) > /proc/sys/vm/dirty_bytes
	need_load write_chunk_pages=64
	# Leave 64 MiB: a 128 MB write must fail. Free blocks, not df's
	# available ones: root may use the reserved 5% too, but not ext4's
	# own reserve (s_resv_clusters, 16 MiB here). The writer dirties more
	# than the 12 MiB freerun ceiling of that limit before it fails: below
	# it a writer its device keeps up with is left alone (pwt_decide_dev()).
	free=$(stat -f -c '%f %S' /mnt | awk '{ print int($1 * $2 / 1024) }')
	fallocate -l $(( (free - 65536) * 1024 )) /mnt/filler
	out=$($PWT_W /mnt/full 128 -s 2>&1)
	st=$?
	log "enospc: free was $free KiB; writer: $out; throttles $(stat_of throttles)"
	expect enospc_reported "write() or fsync() fails with ENOSPC (exit $st: $out)" \
		sh -c "[ $st != 0 ] && echo '$out' | grep -q 'No space left on device'"
	expect enospc_throttled "the writer was in forced writeback ($(stat_of throttles) throttles)" \
		[ "$(stat_of throttles)" -gt 0 ]
	vm_dirty_restore
	rm -f /mnt/filler /mnt/full
	unload
	expect enospc_dmesg_clean "no WARNING/BUG/Oops" tclean enospc
}

torture_run enospc ext4
