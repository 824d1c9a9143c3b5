# SPDX-License-Identifier: GPL-2.0
# torture/newfile.sh: a throttled writer's first write into new files on XFS.
# One concern of torture.sh (see there); alone: torture.sh newfile, or
# make check T=newfile.
. /pwt/lib.sh

# The hook runs before a write dirties its first page (iomap on both
# kernels, generic_perform_write from 6.12 on), and XFS attaches an inode to
# its bdi_writeback only when the first folio is dirtied: a forced writeback
# decided at that first call meets an inode with no writeback context yet.
# With 16-page chunks and a 16 MiB dirty limit, every new file's first
# write() of an over writer is such a decision (each file a new name).
# The writer must outrun its device to be over at all, and on vda alone
# it did not reliably: about 45 MB/s against the disk's 40, which the
# kernel measured at up to 100 MB/s; 0 throttles in 2 of 3 boots after
# nofs_ext4 (7.3), and once in ten make checks. So vda at 8 MB/s for it
# (slow_cgroup): over once its cgroup's writeback has a backlog, it stays
# over (pwt_decide()'s hysteresis) into each next file, whose first
# decision then reads the device's root writeback context (pwt_inode_wb()).
t_newfile() {
	local st thr slow
	slow=$(slow_cgroup pwt-newfile 8388608) ||
		{ skip newfile "no cgroup2 io.max on this kernel"; return; }
	tmark newfile
	echo $((16 << 20)) > /proc/sys/vm/dirty_bytes
	need_load write_chunk_pages=16
	# Eight 4 MB files: 32 MB, 4 s at 8 MB/s.
	start_in_cgroup $slow "$T/pwt-pattern" -S 4 -n "$(big 8 16)" -k "$(big 8 16)" -s 51 /mnt/new \
		> /tmp/new.out 2>&1
	wait_max $! 120
	st=$?
	vm_dirty_restore
	cgroup_unthrottle $slow
	thr=$(stat_of throttles)
	log "newfile: $(cat /tmp/new.out); throttles $thr, checks $(stat_of checks), skipped $(stat_of skipped)"
	expect newfile_throttled "the writer was in forced writeback: $thr throttles, want >= 1" [ "$thr" -ge 1 ]
	expect newfile_writer "writer of new 4 MB files exits 0 (exit $st: $(cat /tmp/new.out))" [ $st = 0 ]
	expect newfile_dmesg_clean "no WARNING/BUG/Oops" tclean newfile
	unload
	expect newfile_data "the files read back their pattern" verify_all /mnt/new.manifest
	rm -f /mnt/new*
	rmdir $slow
}

torture_run newfile xfs
