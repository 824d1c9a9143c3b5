# SPDX-License-Identifier: GPL-2.0
# Andrea Arcangeli's 2005 experiment, stock kernel vs pwthrottle, side by side
# in one boot:
#   a hog (cp /dev/zero FILE) writes in the background; after it settled,
#   time "for i in 1..10: dd if=/dev/zero of=DIR/$i bs=10M count=1", rm, x LOOPS.
# Also the loop with no hog (the ideal) and the hog's throughput alone and
# during the loops (from its write accounting, /proc/PID/io wchar).
#
# Usage: experiment.sh [LOOPS] [MODES] [CHECK] [PARAMS] [HOG]
#   HOG "file" (default: one big file, like cp /dev/zero), "many" (1 MB
#   files one after another from one process, like untar or rsync),
#   "threads" (4 threads of one process, each streaming its own file) or
#   "perfile" (a new process per 16 MiB file, 4 at once, like xargs -P4 cp);
#   the last two need the static tools as /opt/pwt (vm-run --file)
#   MODES "stock pwthrottle" (default); CHECK=1 adds a pass/fail line that
#   fails only on a gross regression (pwthrottle's median loop slower than
#   stock's), for make check.
# Machine-readable output on fd 3:
#   RESULT series=6.1 mode=stock hog=0|file|many loop=3 secs=8.41
#   HOG series=6.1 mode=stock hog=file phase=alone|loops mibps=19.4 disk_mibps=19.6
#     mibps: what the hog wrote (wchar; 0 for perfile, whose writers are
#     children); disk_mibps: what reached the disk.
#     With the hog alone, disk_mibps is its bandwidth; mibps also moves with
#     the dirty backlog (pwthrottle drains the one built before the
#     prediction caught up).
#   SAMPLE series=6.1 mode=stock t=12.25 dirty_kb=171000 writeback_kb=9000
. /pwt/lib.sh

LOOPS=${1:-5}
MODES=${2:-stock pwthrottle}
CHECK=${3:-0}
PARAMS=${4:-}	# module parameters, e.g. "write_chunk_pages=1024"
HOG=${5:-file}
WARMUP=10	# Andrea: "wait just a few seconds" for the prediction to build
ALONE=6

mount_scratch
mkdir -p /mnt/tmp
need_load
unload
warm_up

sampler() {
	local t0
	t0=$(now)
	while :; do
		echo "SAMPLE series=$SERIES mode=$1 t=$(awk -v a="$t0" '{ printf "%.2f", $1 - a }' /proc/uptime) $(dirty_wb_kb | awk '{ print "dirty_kb=" $1, "writeback_kb=" $2 }')" >&3
		usleep 250000
	done
}

for mode in $MODES; do
	# shellcheck disable=SC2086
	[ "$mode" = pwthrottle ] && need_load $PARAMS
	log "== $mode: no hog"
	l=1
	while [ $l -le "$LOOPS" ]; do
		s=$(ten_writes)
		say "RESULT series=$SERIES mode=$mode hog=0 loop=$l secs=$s"
		l=$((l + 1))
	done
	sync

	log "== $mode: with hog"
	sampler $mode &
	samp=$!
	# Bigger than the run can write, so the hog never finishes early. A
	# job of its own, as "cp ... &" from a shell: see group_by.
	mkdir -p /mnt/hogdir
	case $HOG in
	many)	setsid /bin/pwt-writer /mnt/hogdir/f 3500 -f 1 -t 600 > /dev/null 2>&1 & ;;
	threads) setsid /opt/pwt/pwt-fork /mnt/hogdir 4 -t -w 4 -k 896000 > /dev/null 2>&1 & ;;
	perfile) setsid /opt/pwt/pwt-fork /mnt/hogdir 1000 -w 4 -k 16384 > /dev/null 2>&1 & ;;
	*)	setsid /bin/pwt-writer /mnt/hogdir/zero 3500 -t 600 > /dev/null 2>&1 & ;;
	esac
	hog=$!
	sleep $WARMUP
	w0=$(wchar $hog); d0=$(disk_bytes); t0=$(now)
	sleep $ALONE
	w1=$(wchar $hog); d1=$(disk_bytes); t1=$(now)
	dt=$(awk -v a=$t0 -v b=$t1 'BEGIN { print b - a }')
	say "HOG series=$SERIES mode=$mode hog=$HOG phase=alone mibps=$(rate $((w1 - w0)) $dt) disk_mibps=$(rate $((d1 - d0)) $dt)"
	l=1
	: > /tmp/loops.$mode
	while [ $l -le "$LOOPS" ]; do
		s=$(ten_writes)
		echo "$s" >> /tmp/loops.$mode
		say "RESULT series=$SERIES mode=$mode hog=$HOG loop=$l secs=$s"
		l=$((l + 1))
	done
	w2=$(wchar $hog); d2=$(disk_bytes); t2=$(now)
	dt=$(awk -v a=$t1 -v b=$t2 'BEGIN { print b - a }')
	say "HOG series=$SERIES mode=$mode hog=$HOG phase=loops mibps=$(rate $((w2 - w1)) $dt) disk_mibps=$(rate $((d2 - d1)) $dt)"
	[ "$mode" = pwthrottle ] && log "$(cat $DBG/stats | tr '\n' ' ')"
	kill $hog $samp
	wait $hog $samp 2>/dev/null
	# perfile's children finish the file they are writing, then exit.
	while pidof pwt-fork > /dev/null; do usleep 100000; done
	rm -rf /mnt/hogdir
	sync
	[ "$mode" = pwthrottle ] && unload
done

if [ "$CHECK" = 1 ]; then
	ms=$(median < /tmp/loops.stock)
	mp=$(median < /tmp/loops.pwthrottle)
	expect experiment_not_slower "median loop with hog: pwthrottle ${mp}s vs stock ${ms}s" \
		awk -v p="$mp" -v s="$ms" 'BEGIN { exit !(p <= s) }'
fi
umount /mnt
finish
