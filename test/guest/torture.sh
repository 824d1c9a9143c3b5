# SPDX-License-Identifier: GPL-2.0
# Torture: pwthrottle must never lose data, hang, leak or oops, whatever is
# thrown at it. One script per concern in torture/, each independent: it
# starts from nothing loaded and the file system its checks were written
# for, and puts back the vm.dirty_* sysctls it changes (torture_run,
# lib.sh). Each states its pass criteria at its top and in its test lines:
#   fuzz       knobs, debugfs and insmod parameters refuse bad input
#   conflict   another IPMODIFY user of the hooked function: EBUSY both ways
#   reuse      a new task on a SIGKILLed hog's pid starts with no prediction
#   storm      thousands of short-lived writers: the table stays bounded
#   chain      writers on pids chosen to share one chain: it stays bounded
#   churn      insmod/rmmod cycles under four kinds of writers, data intact
#   slowrmmod  rmmod while writers sleep in pwthrottle on a 1 MB/s device
#   wedge      a lone writer and fsx: wall and CPU time against stock
#   memory     writers beside a memory hog: no OOM, no hang, data intact
#   enospc eio the application gets ENOSPC, EIO/EROFS from write()/fsync()
#   frozen     writers stuck in the stock throttle on a suspended device
#              while idle entries are evicted: the table's memory bounded
#   nofs_*     six concurrent writers on XFS, btrfs, ext4 data=journal
#              (torture/nofs.sh FS): hung-task detector silent, data intact
#   uring      io_uring NOWAIT writes on XFS: the submitter never sleeps
#   newfile    a throttled writer's first write into new files on XFS
#
# An oops inside pwthrottle leaves rmmod waiting for ever; the concern then
# fails "rmmod_hung" and the run ends there.
#
# Usage: torture.sh [long] [SCENARIO...]
#   long       the full counts (200 load/unload cycles, 2 x 10000 storm
#              writers, 20 pid reuses...); the default is the make check
#              size, about 6 minutes under TCG
#   SCENARIO   run only these (default: all, in the order of SCENARIOS)
#
#   scripts/build-test-tools 6.1.0-57-amd64
#   scripts/vm-run --kernel 6.1 --quiet --disk-bps 40000000 --accel tcg-single --append slub_nomerge \
#     --module build/6.1.0-57-amd64/pwthrottle.ko \
#     --module build/6.1.0-57-amd64/conflict/pwt_conflict.ko \
#     --file build/tools:/opt/pwt -- test/guest/torture.sh long
#
# The scratch disk starts as the host's ext4; the concerns format it as XFS,
# btrfs and ext4 with the host's mkfs binaries (build-test-tools puts them
# in /opt/pwt/fsbin). slub_nomerge gives pwthrottle's slab cache its own
# line in /proc/slabinfo; without it the storm test counts entries in
# debugfs.
. /pwt/lib.sh

# The scenarios in the order they run; scripts/check reads these two lines
# for make check T=...
SCENARIOS="fuzz conflict reuse storm chain churn slowrmmod wedge memory enospc eio frozen"
SCENARIOS="$SCENARIOS nofs_xfs uring nofs_btrfs nofs_ext4 newfile"

SEL=''
for a in "$@"; do
	case $a in
	long) export PWT_LONG=1 ;;
	*) SEL="$SEL $a" ;;
	esac
done

mount_scratch
dmesg_mark
[ -x "$T/pwt-pattern" ] || { fail torture "no tools in $T (scripts/build-test-tools; vm-run --file build/tools:$T)"; finish; }
for s in ${SEL:-$SCENARIOS}; do
	t0=$(now_cs)
	log "=== $s"
	rm -f $KTAP_FAILED
	case $s in
	nofs_*) sh /pwt/torture/nofs.sh "${s#nofs_}" ;;
	*) sh "/pwt/torture/$s.sh" ;;
	esac
	st=$?
	# A concern that ended badly but failed no check of its own (a shell
	# error, a crash) still counts as one failure.
	if [ $st != 0 ]; then
		FAILED=1
		[ -e $KTAP_FAILED ] || fail "$s" "the concern exited $st before its checks ended"
	fi
	log "=== $s took $(secs_since "$t0") s"
	[ ! -e /tmp/rmmod_hung ] || finish
done
ensure_unloaded
expect torture_dmesg_clean "no WARNING/BUG/Oops in the whole run" dmesg_clean
finish
