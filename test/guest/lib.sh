# SPDX-License-Identifier: GPL-2.0
# Shared by the guest tests. Sourced by busybox sh inside the VM; results go
# to fd 3 (the second serial port) as KTAP (Documentation/dev-tools/ktap.rst):
# "KTAP version 1" once per boot, then one line per test,
#   ok N NAME | not ok N NAME # why | ok N NAME # SKIP why
# N counts the boot's tests in /tmp/ktap.count, since one boot may run its
# tests in several processes (torture.sh runs a script per concern). NAME
# is prefixed with the kernel's release less "-amd64" (6.1.0-57,
# 6.12.118+deb13-rt, 7.3.4+deb13) so every kernel's runs stay apart.

KO=/lib/modules/extra/pwthrottle.ko
DBG=/sys/kernel/debug/pwthrottle
PARAMS=/sys/module/pwthrottle/parameters
SYSCTL=/proc/sys/vm/dirty_ratio_centisecs
TR=/sys/kernel/tracing
# The static test tools (scripts/build-test-tools; vm-run --file
# build/tools:/opt/pwt) where a suite needs more than pwt-writer.
T=/opt/pwt
PWT_W=/bin/pwt-writer
SERIES=$(uname -r | sed 's/-amd64$//')
FAILED=0

KTAP_COUNT=/tmp/ktap.count

say() { echo "$*" >&3; echo "$*"; }
# result ok|"not ok" NAME [DIAGNOSTIC]: the boot's next test line.
result() {
	local n
	read -r n < $KTAP_COUNT
	n=$((n + 1))
	echo $n > $KTAP_COUNT
	say "$1 $n $SERIES/$2${3:+ # $3}"
}
ok() { result ok "$1"; }
# A failed check also leaves KTAP_FAILED behind: torture.sh tells a
# concern that failed a check from one that died before its checks.
KTAP_FAILED=/tmp/ktap.failed
fail() { result "not ok" "$1" "$2"; FAILED=1; : > $KTAP_FAILED; }
skip() { result ok "$1" "SKIP $2"; }
log() { echo "# $*"; }
[ -e $KTAP_COUNT ] || { echo 0 > $KTAP_COUNT; say "KTAP version 1"; }

# expect NAME DESCRIPTION CONDITION...: one test line from a shell condition.
# CONDITION is one command: "expect ... [ a ] && [ b ]" would test only a
# (the && is the caller's); write [ a -a b ] or sh -c '...'.
expect() {
	local name=$1 what=$2
	shift 2
	if "$@"; then ok "$name"; else fail "$name" "$what"; fi
}

# refused CMD...: CMD (a command or one of these functions) fails; its
# error message is dropped. In this shell: "sh -c '! load ...'" would run a
# shell that has no such function, fail with 127 and pass.
refused() { ! "$@" 2> /dev/null; }

# wait_file FILE SECS: until FILE exists, SECS at most; fails if it does not.
wait_file() {
	local n=$(($2 * 50))
	while [ ! -e "$1" ] && [ $n -gt 0 ]; do usleep 20000; n=$((n - 1)); done
	[ -e "$1" ]
}

# alive PID: running, not a zombie waiting for "wait" (kill -0 succeeds on those).
alive() {
	local line
	{ read -r line < "/proc/$1/stat"; } 2>/dev/null || return 1
	case $line in *") Z "*) return 1 ;; esac
}

# debug_kernel: the kernel make check-debug builds (KASAN, lockdep, kmemleak;
# release "*-pwtdebug"), where everything a task does in its own context costs
# several times its stock price: checks that time a writer allow for it.
debug_kernel() { case $(uname -r) in *-pwtdebug) return 0 ;; esac; return 1; }

load() { insmod "$KO" "$@"; }
loaded() { grep -q '^pwthrottle ' /proc/modules; }
# need_load [PARAM=VALUE...]: load, or fail and end this script: every
# check after it would measure the stock kernel, and some would pass.
need_load() {
	load "$@" && return
	fail load "insmod $KO $* failed: the checks after it would see stock"
	finish
}
# unload: rmmod, bounded (rmmod_bounded), then a kmemleak scan where there
# is kmemleak (leak_scan).
unload() { rmmod_bounded && leak_scan; }
ensure_unloaded() { ! loaded || unload; }

# wait_max PID SECS [POLL_US]: the job's exit status; 124 if it had to be
# killed, 125 if even SIGKILL did not end it (asleep in the kernel for good).
# A job killed says first where it was: its kernel stack, three samples,
# and its line in pwthrottle's task table.
wait_max() {
	local poll=${3:-200000} n
	n=$(($2 * 1000000 / poll))
	while alive "$1" && [ $n -gt 0 ]; do
		usleep "$poll"
		n=$((n - 1))
	done
	alive "$1" || { wait "$1"; return; }
	log "wait_max: pid $1 still running after $2 s: $(tr '\0' ' ' < /proc/$1/cmdline 2>/dev/null)"
	for n in 1 2 3; do
		sed 's/^/#   /' /proc/$1/stack 2>/dev/null
		usleep 100000
	done
	[ ! -r $DBG/tasks ] || awk -v p="$1" '$1 == p { print "#   task: " $0 }' $DBG/tasks
	kill -9 "$1" 2>/dev/null
	n=25
	while alive "$1" && [ $n -gt 0 ]; do
		usleep 200000
		n=$((n - 1))
	done
	alive "$1" && return 125
	wait "$1"
	return 124
}

# rmmod, bounded: after an oops inside pwthrottle the dead task never
# leaves its SRCU read section and rmmod would wait for ever. Say so and
# end the run, instead of sitting until the harness kills the VM.
rmmod_bounded() {
	local st
	rmmod pwthrottle &
	wait_max $! 60 20000
	st=$?
	if [ $st -ge 124 ]; then
		fail rmmod_hung "rmmod pwthrottle did not return in 60 s; ending the run"
		touch /tmp/rmmod_hung	# for torture.sh: no concern after this one
		finish
	fi
	return $st
}

# The vm.dirty_* sysctls, saved by a test before it changes them and put
# back after. Of each pair (dirty_bytes and dirty_ratio, their background
# twins) the kernel keeps one set and reads the other as 0: writing the
# non-zero one restores both.
# (A sysctl file answers only a read from its start, and busybox's read
# builtin reads a byte at a time: "read -r v < /proc/sys/..." gets the
# first digit, and dirty_ratio 20 came back as 2. So cat, one read.)
VM_DIRTY_KNOBS="dirty_bytes dirty_ratio dirty_background_bytes dirty_background_ratio
	dirty_expire_centisecs dirty_writeback_centisecs"
# vm_dirty_now: the knobs as they stand, "k=v ..."
vm_dirty_now() {
	local k
	for k in $VM_DIRTY_KNOBS; do
		printf ' %s=%s' $k "$(cat /proc/sys/vm/$k)"
	done
}
vm_dirty_save() { VM_DIRTY_SAVED=$(vm_dirty_now); }
vm_dirty_restore() {
	local kv
	for kv in $VM_DIRTY_SAVED; do
		case ${kv%%=*} in
		*_bytes | *_ratio) [ "${kv#*=}" != 0 ] || continue ;;
		esac
		echo "${kv#*=}" > "/proc/sys/vm/${kv%%=*}"
	done
}

# trace_overrun: events the trace buffer lost (overwritten), all CPUs.
trace_overrun() {
	cat /sys/kernel/tracing/per_cpu/cpu*/stats |
		awk '/^overrun:/ { n += $2 } END { print n + 0 }'
}

# trace_reset: tracing off, its buffer empty, no comm recording: enabling
# the first event would otherwise hook sched_switch and sched_wakeup,
# patching __schedule() while the other vCPU runs it (observe.sh).
trace_reset() {
	echo 0 > $TR/options/record-cmd
	echo 0 > $TR/tracing_on
	echo > $TR/trace
}
# trace_events 1|0 EVENT...: switch pwthrottle's trace events on or off.
trace_events() {
	local v=$1 e
	shift
	for e in "$@"; do echo "$v" > $TR/events/pwthrottle/$e/enable; done
}

# stat_of KEY: a value from debugfs stats.
stat_of() { awk -v k="$1" '$1 == k { print $2 }' "$DBG/stats"; }

# dev_kept_up DEV: "1 MS" if DEV's root writeback writes all that waits on
# it (dirty and under writeback there) within PWT_FAST_DRAIN_MS (200 ms)
# of its measured bandwidth, "0 MS" if not, "- 0" while the kernel has
# measured nothing (its starting 100 MB/s: pwthrottle then decides by
# memory alone, as in 2005); MS is that backlog in ms. At such a device
# pwt_decide_dev() (include/pwt_predict.h) makes no writer an over-dirtier,
# whatever the memory: a stress whose every measured sample kept up may
# rightly have held no one. (Its rule with the freerun ceiling is wider:
# 6.1's newfile writer was held 1855 times with every sample under it,
# over between two samples and kept over by the hysteresis.)
dev_kept_up() {
	awk '{ v[$1] = $2 }
	END {
		bw = v["BdiWriteBandwidth:"]
		if (!bw || bw == 102400) { print "- 0"; exit }
		ms = (v["BdiReclaimable:"] + v["BdiWriteback:"]) * 1000 / bw
		printf "%d %d\n", ms <= 200, ms
	}' "/sys/kernel/debug/bdi/$(cat /sys/block/$1/dev)/stats"
}
# sample_kept_up DEV FILE: dev_kept_up DEV into FILE every 200 ms, until
# killed (run it in the background).
sample_kept_up() {
	: > "$2"
	while :; do
		dev_kept_up "$1" >> "$2"
		usleep 200000
	done
}
# always_kept_up FILE: true if FILE has measured samples and every one
# kept up; prints the counts and the largest backlog in ms, for the log.
always_kept_up() {
	awk '$1 == "-" { u++; next } { n++; if ($1 != 1) bad++; if ($2 > m) m = $2 }
		END { printf "%d samples (and %d before the kernel measured vda), %d not keeping up, backlog at most %d ms\n", n, u, bad, m
		exit !(n > 0 && bad == 0) }' "$1"
}

# slab_active: active objects of pwthrottle's task entry cache, empty if
# merged away (boot with slub_nomerge to give it a line of its own).
slab_active() { awk '$1 == "pwt_task" { print $2 }' /proc/slabinfo; }
# slab_inuse: the same, exact: SLUB counts the free objects still held in
# per-CPU slabs as active, and shrinking the cache first flushes those.
slab_inuse() {
	[ -w /sys/kernel/slab/pwt_task/shrink ] && echo 1 > /sys/kernel/slab/pwt_task/shrink
	slab_active
}

# task_field PID COLUMN: a column of debugfs tasks for PID (empty if absent).
task_field() {
	awk -v p="$1" -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$1 == p { print $col[c] }' "$DBG/tasks"
}

# meminfo_kb FIELD
meminfo_kb() { awk -v f="$1:" '$1 == f { print $2 }' /proc/meminfo; }

# dirty_wb_kb: "DIRTY WRITEBACK" (KiB) from one read of /proc/meminfo. Two
# reads (two awk processes, ~10 ms apart under TCG) count twice the pages
# that writeback moves from Dirty to Writeback in between: when the flusher
# starts at the background threshold it moves tens of MB at once (7.3: a
# sample of 90 MB, 73 MB 70 ms later with Writeback unchanged).
dirty_wb_kb() {
	awk '$1 == "Dirty:" { d = $2 } $1 == "Writeback:" { w = $2 }
		END { print d, w }' /proc/meminfo
}

# write_rejected FILE VALUE: the write fails and FILE keeps its old content.
write_rejected() {
	local before after
	before=$(cat "$1")
	write_refused "$1" "$2" || return 1
	after=$(cat "$1")
	[ "$before" = "$after" ]
}
# write_refused FILE VALUE: the write fails. For files whose content is
# live (debugfs stats: counters, nr_dirty), where "unchanged" cannot be
# asked of two reads.
write_refused() { ! (echo "$2" > "$1") 2> /dev/null; }

mount_scratch() {
	mkdir -p /mnt
	mount -t "${1:-ext4}" /dev/vda /mnt
}

# The kernel says nothing bad since the mark. On a kernel with kmemleak
# (make check-debug), the mark also forgets the leaks suspected so far,
# every unload scans (leak_scan), and dmesg_clean scans once more: any
# object left unreferenced since the mark is a report too.
KMEMLEAK=/sys/kernel/debug/kmemleak
# kmemleak reports an object only once it is this old (MSECS_MIN_AGE,
# mm/kmemleak.c): what the last unload freed wrongly shows a scan later.
KMEMLEAK_MIN_AGE_S=5
dmesg_mark() {
	dmesg | wc -l > /tmp/dmesg.mark
	[ ! -w $KMEMLEAK ] || echo clear > $KMEMLEAK
	rm -f /tmp/kmemleak.found
}
# leak_scan: on a kmemleak kernel, scan now (the write returns when the
# scan is done) and keep what it found for dmesg_clean; else nothing.
leak_scan() {
	[ -w $KMEMLEAK ] || return 0
	echo scan > $KMEMLEAK
	if grep -q 'unreferenced object' $KMEMLEAK; then
		log "kmemleak: reports after an unload"
		touch /tmp/kmemleak.found
	fi
	return 0
}
dmesg_clean() {
	if [ -w $KMEMLEAK ]; then
		sleep $KMEMLEAK_MIN_AGE_S
		leak_scan
		if [ -e /tmp/kmemleak.found ]; then
			head -n 40 $KMEMLEAK | sed 's/^/# kmemleak: /'
			return 1
		fi
	fi
	! dmesg_since_mark | grep -qE 'WARNING:|BUG:|Oops|Call Trace|general protection'
}
# dmesg_since_mark: the kernel's lines since dmesg_mark.
dmesg_since_mark() { dmesg | tail -n +"$(( $(cat /tmp/dmesg.mark 2>/dev/null || echo 0) + 1 ))"; }
# dmesg_says TEXT: a kernel line since dmesg_mark holds TEXT.
dmesg_says() { dmesg_since_mark | grep -qF "$1"; }

# sample_dirty SECONDS OUTFILE: Dirty+Writeback (KiB) every 0.25 s, then the
# peak is the largest line. Runs in the foreground.
sample_dirty() {
	local n=$(($1 * 4))
	: > "$2"
	while [ $n -gt 0 ]; do
		dirty_wb_kb | awk '{ print $1 + $2 }' >> "$2"
		usleep 250000
		n=$((n - 1))
	done
}
peak_of() { sort -n "$1" | tail -1; }

# wait_gone PID: wait for a background job to finish, return its status.
wait_gone() { wait "$1"; }

# --- time ---
now() { awk '{ print $1 }' /proc/uptime; }
# Centiseconds since boot: busybox date has no sub-second format.
now_cs() {
	local up rest
	read -r up rest < /proc/uptime
	echo "${up%.*}${up#*.}"
}
secs_since() { awk -v a="$1" -v b="$(now_cs)" 'BEGIN { printf "%.2f", (b - a) / 100 }'; }
# within N LO HI: LO <= N <= HI.
within() { [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }
# median: of the numbers on stdin, the middle one (of an even count, the
# lower middle one).
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# --- shared by the torture concerns (torture.sh, torture/) ---
# big SMALL LARGE: make check's count, or torture.sh long's.
big() { if [ "${PWT_LONG:-0}" = 1 ]; then echo "$2"; else echo "$1"; fi; }
# A marker in the kernel log, so "since" survives the ring buffer wrapping,
# which counting lines would not.
tmark() { echo "pwt-torture: mark $1" > /dev/kmsg; }
tsince() { dmesg | sed -n "/pwt-torture: mark $1\$/,\$p"; }
tclean() { ! tsince "$1" | grep -qE 'WARNING:|BUG:|Oops|Call Trace|general protection|blocked for more than'; }
drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches; }

# Host binaries (mkfs.xfs, mkfs.btrfs) through their own loader and libraries.
fsbin() {
	local p=$1
	shift
	"$T/fsbin/lib/ld-linux-x86-64.so.2" --library-path "$T/fsbin/lib" "$T/fsbin/bin/$p" "$@"
}
have_fsbin() { [ -x "$T/fsbin/bin/$1" ]; }

# scratch FS [MOUNT_OPTIONS]: /mnt is /dev/vda freshly formatted as FS.
scratch() {
	local fs=$1 opts=${2:-defaults}
	grep -q ' /mnt ' /proc/mounts && umount /mnt
	case $fs in
	ext4) fsbin mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 /dev/vda || return 1 ;;
	xfs) fsbin mkfs.xfs -q -f -K /dev/vda || return 1 ;;
	btrfs) fsbin mkfs.btrfs -q -f /dev/vda > /dev/null || return 1 ;;
	esac
	mkdir -p /mnt
	mount -t "$fs" -o "$opts" /dev/vda /mnt
}

# verify_all MANIFEST...: every listed file read back from the disk, not the
# page cache, matches its pattern. Prints what failed.
verify_all() {
	local m bad=0
	drop_caches
	for m in "$@"; do
		"$T/pwt-pattern" -V "$m" > /tmp/verify.out 2>&1 || { bad=1; cat /tmp/verify.out; }
		log "verify $m: $(cat /tmp/verify.out)"
	done
	return $bad
}

# slow_cgroup NAME BPS [DEV]: a cgroup (v2), printed, whose writes to DEV
# (vda) io.max holds to BPS bytes/s. Cgroup writeback charges its tasks'
# writeback to it (ext4, XFS), so DEV is a slow device for them alone, in
# the same boot as everything else. Fails where the kernel has no cgroup2
# io.max.
CG=/sys/fs/cgroup
slow_cgroup() {
	mkdir -p $CG
	grep -q " $CG cgroup2 " /proc/mounts || mount -t cgroup2 none $CG || return 1
	echo "+memory +io" > $CG/cgroup.subtree_control && mkdir -p "$CG/$1" &&
		echo "$(cat "/sys/block/${3:-vda}/dev") wbps=$2" > "$CG/$1/io.max" && echo "$CG/$1"
}
# cgroup_unthrottle DIR: vda at full speed again for DIR's tasks.
cgroup_unthrottle() { echo "$(cat /sys/block/vda/dev) wbps=max" > "$1/io.max"; }
# start_in_cgroup DIR CMD...: CMD started in the background in cgroup DIR;
# $! is its pid after the call (a function run with "&" would give the
# pid of the subshell that runs it instead).
start_in_cgroup() {
	local d=$1
	shift
	sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$d" "$@" &
}

# on_fs FS: /mnt holds FS: as mounted, or the scratch disk mounted as FS,
# or formatted anew (scratch). The torture concerns each start with the
# file system their checks were written for, whatever ran before them.
on_fs() {
	grep -q " /mnt $1 " /proc/mounts && return 0
	grep -q ' /mnt ' /proc/mounts && umount /mnt
	mkdir -p /mnt
	mount -t "$1" /dev/vda /mnt 2>/dev/null || scratch "$1"
}

# dm_scratch NAME [MOUNT_OPTIONS]: /mnt again, the ext4 of /dev/vda now
# seen through a linear device-mapper map, pwt-NAME (its node in $DM),
# which pwt-dm can fail or suspend under it. Where it cannot, test NAME
# skips (no device-mapper) or fails, /mnt as it was, and it returns 1.
# dm_scratch_end NAME: back to /dev/vda itself.
dm_scratch() {
	modprobe dm_mod 2>/dev/null	# or built in (the debug kernel)
	if [ ! -c /dev/mapper/control ]; then
		skip "$1" "no device-mapper in this kernel"
		return 1
	fi
	umount /mnt
	if ! DM=$("$T/pwt-dm" create "pwt-$1" /dev/vda); then
		fail "$1" "pwt-dm create failed"
		mount_scratch
		return 1
	fi
	mount -t ext4 ${2:+-o "$2"} "/dev/$DM" /mnt && return 0
	fail "$1" "mount /dev/$DM"
	"$T/pwt-dm" remove "pwt-$1"
	mount_scratch
	return 1
}
dm_scratch_end() {
	umount /mnt
	"$T/pwt-dm" remove "pwt-$1"
	mount_scratch
}

# torture_run NAME [FS]: run one torture concern, t_NAME, as torture.sh
# or the concern's own script alone does: the static tools there, nothing
# loaded, /mnt on FS (if given; the concern skips where FS cannot be
# made), and the vm.dirty_* sysctls put back and the module unloaded after,
# however the concern ends: at an exit too (need_load's when insmod
# fails), or the next concern would start from what this one set.
torture_run() {
	local name=$1
	[ -x "$T/pwt-pattern" ] || { fail torture "no tools in $T (scripts/build-test-tools; vm-run --file build/tools:$T)"; finish; }
	[ -x "$T/pwt-writer" ] && PWT_W=$T/pwt-writer
	ensure_unloaded
	[ -z "${2:-}" ] || on_fs "$2" || { skip "$name" "no $2 on /mnt (mkfs.$2 missing?)"; finish; }
	vm_dirty_save
	trap 'vm_dirty_restore; ensure_unloaded' EXIT
	"t_$name"
	finish
}

# --- shared by the benchmarks ---
wchar() { awk '$1 == "wchar:" { print $2 }' /proc/$1/io; }
# kswapd_pages: pages kswapd has reclaimed since boot (a light writer beside
# a fast buffered hog allocates from memory the hog's clean cache fills).
kswapd_pages() { awk '$1 == "pgsteal_kswapd" { print $2 }' /proc/vmstat; }
# cpu_ticks [PID|NAME]: CPU time used so far, in clock ticks (USER_HZ,
# 100 a second on x86): all vCPUs' busy time (no argument), one task's (a
# pid), or that of every living task whose name begins with NAME (kworker:
# the flusher's and the other workers'). What a fast buffered hog costs
# the tasks beside it goes partly to such threads.
cpu_ticks() {
	case ${1:-} in
	'') awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat ;;
	*[!0-9]*) cat /proc/[0-9]*/stat 2> /dev/null |
		awk -v p="($1" 'index($2, p) == 1 { t += $14 + $15 } END { print t + 0 }' ;;
	*) awk '{ print $14 + $15 }' /proc/$1/stat 2> /dev/null || echo 0 ;;
	esac
}
# vcpus TICKS SECS: the vCPUs TICKS kept busy over SECS, to 0.01.
vcpus() { awk -v t="$1" -v s="$2" 'BEGIN { printf "%.2f\n", (s > 0 && t > 0 ? t / 100 / s : 0) }'; }
# disk_bytes [DEV]: bytes DEV (default vda) has written (sectors of 512 bytes).
disk_bytes() { awk '{ print $7 * 512 }' /sys/block/${1:-vda}/stat; }
rate() {	# bytes secs -> MiB/s
	awk -v b="$1" -v s="$2" 'BEGIN { printf "%.1f\n", b / 1048576 / s }'
}
secs_between() { awk -v a="$1" -v b="$2" 'BEGIN { print b - a }'; }

# ten_writes: Andrea Arcangeli's timed loop, exactly as in 2005 (bs=10M
# count=1, ten files in /mnt/tmp, then rm); prints its seconds.
ten_writes() {
	local t0 t1 i=1
	mkdir -p /mnt/tmp
	t0=$(now)
	while [ $i -le 10 ]; do
		dd if=/dev/zero of=/mnt/tmp/$i bs=10M count=1 2>/dev/null
		i=$((i + 1))
	done
	t1=$(now)
	rm -f /mnt/tmp/*
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f\n", b - a }'
}

# warm_up: one loop untimed before the first timed one. The boot's first
# is cold (the dd binary, the directory, the allocator's first groups):
# 0.63-0.89 s against 0.30-0.60 after on the fast disk, always in the mode
# measured first, stock: its no-hog median, a ratio's denominator, read
# up to half too high.
warm_up() { ten_writes > /dev/null; }

finish() { exit "$FAILED"; }
