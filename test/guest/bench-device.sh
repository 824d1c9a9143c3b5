# SPDX-License-Identifier: GPL-2.0
# The device-aware benchmark (make bench), every mode in one boot, one
# after the other:
#   stock         the stock kernel
#   pwthrottle    the module loaded (pwthrottle_N: with inflight_ms=N;
#                 pwthrottle_syncN: sync_inflight_ms=N, and sync0 keeps
#                 inflight_ms whoever fsyncs, as before that knob;
#                 pwthrottle_holdN: sync_hold_ms=N, hold0 as before it)
#   dirty_bytes   stock with vm.dirty_bytes=32 MiB, dirty_background_bytes
#                 16 MiB: the usual advice against the USB-stick stall
#   strict_limit  stock with the hog's bdi strict_limit=1 (6.2+; skipped
#                 where the file does not exist)
#
# Usage: bench-device.sh CASE [LOOPS] [MODES]
#   CASE fast:  /dev/vda is fast (vm-run without --disk-bps), /dev/vdb a
#               slow stick (vm-run --disk2): a hog on the fast disk alone
#               and beside Andrea's loop, then a hog on the stick beside the
#               loop on the fast disk
#   CASE stick: only the stick part (a vfat stick, say)
#   CASE fastab: the fast disk's lone hog, stock and pwthrottle alternated
#               three times
#   CASE slow:  /dev/vda throttled (--disk-bps): a hog on it beside the
#               loop, and beside 20 x (4 KiB write + fsync)
#   CASE latency: as slow, on /dev/vda seen through dm-delay (LATENCY_MS,
#               default 20, per write and flush; needs /bin/pwt-dm): a
#               device that writes only as much as is in flight, per
#               latency, as a USB stick or a disk does and QEMU's
#               throttle, an exact clock, does not. It prices a bound on
#               in-flight writeback (inflight_ms) that is too small.
# Machine-readable output on fd 3 (C: CASE, latency's as latencyMS):
#   RESULT series=S mode=M case=C hog=none|cpu|direct|fast|stick|disk loop=N secs=X
#     (cpu: a busy loop on one vCPU, no I/O; direct: an O_DIRECT hog on
#     the fast disk; stock only, the controls)
#   FSYNC series=S mode=M case=C hog=none|disk secs=X
#   HOG series=S mode=M case=C hog=direct|drop|fast|stick|disk phase=alone|loops|loopsonly|fsyncs disk_mibps=X
#     (loopsonly, fsyncs: while the loops, the fsyncs run, one disk only;
#     loops: the loops and the fsyncs)
#     [kswapd_pages=N: pages kswapd reclaimed while the loops ran]
#     [cpu_all=V cpu_hog=V cpu_kworker=V cpu_kswapd=V: the vCPUs (of 2)
#     busy while the loops ran, and those the hog, the kernel's workers
#     (the flusher among them, writing the loop's pages too) and kswapd
#     used; what is left of cpu_all is the loop's]
#     (drop: a buffered hog that drops its pages behind it, 256 MiB back,
#     so kswapd has nothing of it to reclaim; stock only, a control)
. /pwt/lib.sh

CASE=${1:-fast}
LOOPS=${2:-3}
MODES=${3:-stock pwthrottle dirty_bytes strict_limit}
LATENCY_MS=${4:-20}
# What the lines call the case: latency's carries its milliseconds.
TAG=$CASE
[ "$CASE" = latency ] && TAG=latency$LATENCY_MS
# The hog and the light writers share one disk: slow and latency.
one_disk() { [ "$CASE" = slow ] || [ "$CASE" = latency ]; }
WARMUP=8	# the prediction builds, the kernel measures the device
ALONE=5

if [ "$CASE" = latency ]; then
	modprobe dm_delay 2> /dev/null
	dm=$(/bin/pwt-dm delay pwtlat /dev/vda "$LATENCY_MS") &&
		mkdir -p /mnt && mount -t ext4 /dev/$dm /mnt ||
		{ fail bench_latency "no dm-delay device (dm_delay, /bin/pwt-dm)"; finish; }
	log "/mnt on $dm: vda, writes $LATENCY_MS ms late"
else
	mount_scratch
fi
if ! one_disk; then
	mkdir -p /stick
	modprobe vfat 2> /dev/null
	mount /dev/vdb /stick || { fail bench_stick "no /dev/vdb (vm-run --disk2)"; finish; }
fi

# mode_on MODE DEV / mode_off MODE DEV: set a mode up for a hog on DEV.
mode_on() {
	case $1 in
	pwthrottle) need_load ;;
	pwthrottle_hold*) need_load sync_hold_ms=${1#pwthrottle_hold} ;;
	pwthrottle_sync*) need_load sync_inflight_ms=${1#pwthrottle_sync} ;;
	pwthrottle_*) need_load inflight_ms=${1#pwthrottle_} ;;
	dirty_bytes)
		vm_dirty_save
		echo $((32 << 20)) > /proc/sys/vm/dirty_bytes
		echo $((16 << 20)) > /proc/sys/vm/dirty_background_bytes ;;
	strict_limit)
		[ -w /sys/class/bdi/$(cat /sys/block/$2/dev)/strict_limit ] || return 1
		echo 1 > /sys/class/bdi/$(cat /sys/block/$2/dev)/strict_limit ;;
	esac
}
mode_off() {
	case $1 in
	pwthrottle*) unload ;;
	dirty_bytes) vm_dirty_restore ;;
	strict_limit) echo 0 > /sys/class/bdi/$(cat /sys/block/$2/dev)/strict_limit ;;
	esac
}

loops() {	# MODE HOG: LOOPS timed loops
	local l=1
	while [ $l -le "$LOOPS" ]; do
		say "RESULT series=$SERIES mode=$1 case=$TAG hog=$2 loop=$l secs=$(ten_writes)"
		l=$((l + 1))
	done
}

fsyncs() {	# MODE HOG: 20 x (4 KiB write + fsync), an editor's saves
	local t0 i=1
	mkdir -p /mnt/fs
	t0=$(now)
	while [ $i -le 20 ]; do
		dd if=/dev/zero of=/mnt/fs/$i bs=4k count=1 conv=fsync 2>/dev/null
		i=$((i + 1))
	done
	say "FSYNC series=$SERIES mode=$1 case=$TAG hog=$2 secs=$(secs_between "$t0" "$(now)")"
	rm -rf /mnt/fs
}

# hog_start FILE [OPTION...]: a hog writing FILE (pwt-writer's OPTIONs) as a
# job of its own; $HOG is its pid. hog_stop FILE: it ends, FILE is gone and
# what it left dirty is on disk.
hog_start() {
	local file=$1
	shift
	setsid /bin/pwt-writer "$file" 100000 -t 600 "$@" > /dev/null 2>&1 &
	HOG=$!
}
hog_stop() {
	kill $HOG
	wait $HOG 2> /dev/null
	rm -f "$1"
	sync
}

# with_hog MODE NAME DEV FILE [OPTION...]: a hog writing FILE on DEV (with
# pwt-writer's OPTIONs), as a job of its own; its disk rate alone and while
# the loop (and, with one disk, the fsyncs) run beside it.
with_hog() {
	local mode=$1 name=$2 dev=$3 file=$4 hog d0 d1 d2 t0 t1 t2 c1 h1 w1 s1 dt df tf
	shift 4
	hog_start "$file" "$@"
	hog=$HOG
	sleep $WARMUP
	d0=$(disk_bytes $dev); t0=$(now)
	sleep $ALONE
	d1=$(disk_bytes $dev); t1=$(now); k1=$(kswapd_pages)
	c1=$(cpu_ticks); h1=$(cpu_ticks $hog); w1=$(cpu_ticks kworker); s1=$(cpu_ticks kswapd)
	say "HOG series=$SERIES mode=$mode case=$TAG hog=$name phase=alone disk_mibps=$(rate $((d1 - d0)) $(secs_between $t0 $t1))"
	loops "$mode" "$name"
	if one_disk; then
		# The hog's rate over the loops alone, and while the fsyncs run:
		# what a smaller bound while others fsync (sync_inflight_ms) and
		# the hold after each (sync_hold_ms) cost it.
		df=$(disk_bytes $dev); tf=$(now)
		say "HOG series=$SERIES mode=$mode case=$TAG hog=$name phase=loopsonly disk_mibps=$(rate $((df - d1)) $(secs_between $t1 $tf))"
		fsyncs "$mode" "$name"
		say "HOG series=$SERIES mode=$mode case=$TAG hog=$name phase=fsyncs disk_mibps=$(rate $(($(disk_bytes $dev) - df)) $(secs_between $tf $(now)))"
	fi
	d2=$(disk_bytes $dev); t2=$(now); dt=$(secs_between $t1 $t2)
	say "HOG series=$SERIES mode=$mode case=$TAG hog=$name phase=loops disk_mibps=$(rate $((d2 - d1)) $dt) kswapd_pages=$(($(kswapd_pages) - k1))" \
		"cpu_all=$(vcpus $(($(cpu_ticks) - c1)) $dt) cpu_hog=$(vcpus $(($(cpu_ticks $hog) - h1)) $dt)" \
		"cpu_kworker=$(vcpus $(($(cpu_ticks kworker) - w1)) $dt) cpu_kswapd=$(vcpus $(($(cpu_ticks kswapd) - s1)) $dt)"
	hog_stop "$file"
}

# fastab: the fast disk's lone hog only, stock and pwthrottle alternated
# three times (the borderline cell of the fast case, repeated).
if [ "$CASE" = fastab ]; then
	for round in 1 2 3; do
		for mode in stock pwthrottle; do
			mode_on $mode vda
			hog_start /mnt/hog
			sleep $WARMUP
			d0=$(disk_bytes vda); t0=$(now)
			sleep $ALONE
			d1=$(disk_bytes vda); t1=$(now)
			say "HOG series=$SERIES mode=$mode case=fastab hog=fast phase=alone round=$round disk_mibps=$(rate $((d1 - d0)) $(secs_between $t0 $t1))"
			hog_stop /mnt/hog
			mode_off $mode vda
		done
	done
	umount /stick
	umount /mnt
	finish
fi

# warm_up_hog FILE: one loop untimed beside a stock hog writing FILE.
# The boot's first loop beside a hog was slow whichever mode ran first
# (0.55-1.02 s against 0.36-0.68 s for the next two, 2026-12-06: dd twice
# as long on a CPU, never asleep in a throttle; bench/results/analysis.md),
# work the guest does once per boot, not the mode's: a mode that ran
# first paid it (the one-disk loop ratio at 20 MiB/s, 1.16-2.21x so
# against 0.9-1.1x after stock).
warm_up_hog() {
	hog_start "$1"
	sleep 2
	ten_writes > /dev/null
	hog_stop "$1"
}

warm_up
if [ "$CASE" = stick ]; then warm_up_hog /stick/hog; else warm_up_hog /mnt/hog; fi
for mode in $MODES; do
	hogdev=vda
	[ "$CASE" = stick ] && hogdev=vdb
	if ! mode_on "$mode" $hogdev; then
		log "$mode: not on this kernel"
		continue
	fi
	log "== $mode"
	# What the previous mode left dirty is on disk before the baseline.
	sync
	sleep 2
	loops "$mode" none
	one_disk && fsyncs "$mode" none
	case $CASE in
	fast)
		# The controls, stock only. No I/O, one vCPU kept busy: under
		# TCG the fast hog's page copying competes with the loop for the
		# 2 vCPUs. And a hog writing the fast disk with O_DIRECT, 4 MiB a
		# write: the disk busier than the buffered hog keeps it (3-4
		# times the rate), but no dirty page and no page cache, so no
		# throttle, stock's or ours, has anything to do: the loop beside
		# it is as fast as any throttle could make it here. And the
		# buffered hog dropping its pages behind it: kswapd then has none
		# of its cache to reclaim, what is left is the copying and the
		# flusher's work.
		if [ "$mode" = stock ]; then
			sh -c 'while :; do :; done' &
			cpu=$!
			loops "$mode" cpu
			kill $cpu
			wait $cpu 2> /dev/null
			with_hog "$mode" direct vda /mnt/hog -d -b 4096
			with_hog "$mode" drop vda /mnt/hog -D 256
		fi
		with_hog "$mode" fast vda /mnt/hog
		# strict_limit is set per device: the stick's, for the stick's hog.
		[ "$mode" = strict_limit ] && { mode_off "$mode" vda; mode_on "$mode" vdb; }
		with_hog "$mode" stick vdb /stick/hog
		[ "$mode" = strict_limit ] && hogdev=vdb ;;
	stick) with_hog "$mode" stick vdb /stick/hog ;;
	slow | latency) with_hog "$mode" disk vda /mnt/hog ;;
	esac
	loaded && log "$(tr '\n' ' ' < $DBG/stats)"
	mode_off "$mode" $hogdev
done

one_disk || umount /stick
umount /mnt
[ "$CASE" = latency ] && /bin/pwt-dm remove pwtlat
finish
