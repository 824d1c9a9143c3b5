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
# Eight files: once the disk is measured (earlier concerns wrote to it),
# the writer is over only past the kernel's freerun ceiling, 12 MiB here,
# and four files (64 MB at about 50 MB/s against the disk's 40) were
# sometimes done before that, never throttled (7.3).
t_newfile() {
	local st thr kept
	tmark newfile
	echo $((16 << 20)) > /proc/sys/vm/dirty_bytes
	need_load write_chunk_pages=16
	sample_kept_up vda /tmp/new.kept &
	kept=$!
	"$T/pwt-pattern" -S 16 -n "$(big 8 16)" -k "$(big 8 16)" -s 51 /mnt/new > /tmp/new.out 2>&1 &
	wait_max $! 120
	st=$?
	kill $kept
	wait $kept
	vm_dirty_restore
	thr=$(stat_of throttles)
	log "newfile: $(cat /tmp/new.out); throttles $thr, checks $(stat_of checks), skipped $(stat_of skipped);" \
		"vda: $(always_kept_up /tmp/new.kept)"
	# A writer that never outran vda is no over-dirtier (see dev_kept_up).
	if [ "$thr" = 0 ] && always_kept_up /tmp/new.kept > /dev/null; then
		skip newfile_throttled "vda kept up with the writer: $(always_kept_up /tmp/new.kept)"
	else
		expect newfile_throttled "the writer was in forced writeback: $thr throttles, want >= 1" [ "$thr" -ge 1 ]
	fi
	expect newfile_writer "writer of new 16 MB files exits 0 (exit $st: $(cat /tmp/new.out))" [ $st = 0 ]
	expect newfile_dmesg_clean "no WARNING/BUG/Oops" tclean newfile
	unload
	expect newfile_data "the files read back their pattern" verify_all /mnt/new.manifest
	rm -f /mnt/new*
}

torture_run newfile xfs
