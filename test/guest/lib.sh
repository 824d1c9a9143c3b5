# SPDX-License-Identifier: GPL-2.0
# Shared by the guest tests. Sourced by busybox sh inside the VM; results go
# to fd 3 (the second serial port), one line each:
#   ok NAME | FAIL NAME: why | SKIP NAME: why
# NAME is prefixed with the kernel's release less "-amd64" (6.1.0-57,
# 6.12.118+deb13-rt, 7.3.4+deb13) so every kernel's runs stay apart.

KO=/lib/modules/extra/pwthrottle.ko
DBG=/sys/kernel/debug/pwthrottle
PARAMS=/sys/module/pwthrottle/parameters
SYSCTL=/proc/sys/vm/dirty_ratio_centisecs
SERIES=$(uname -r | sed 's/-amd64$//')
FAILED=0

say() { echo "$*" >&3; echo "$*"; }
ok() { say "ok $SERIES/$1"; }
fail() { say "FAIL $SERIES/$1: $2"; FAILED=1; }
skip() { say "SKIP $SERIES/$1: $2"; }
log() { echo "# $*"; }

# expect NAME DESCRIPTION CONDITION...: one test line from a shell condition.
# CONDITION is one command: "expect ... [ a ] && [ b ]" would test only a
# (the && is the caller's); write [ a -a b ] or sh -c '...'.
expect() {
	local name=$1 what=$2
	shift 2
	if "$@"; then ok "$name"; else fail "$name" "$what"; fi
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
unload() { rmmod pwthrottle && leak_scan; }
loaded() { grep -q '^pwthrottle ' /proc/modules; }

# trace_overrun: events the trace buffer lost (overwritten), all CPUs.
trace_overrun() {
	cat /sys/kernel/tracing/per_cpu/cpu*/stats |
		awk '/^overrun:/ { n += $2 } END { print n + 0 }'
}

# stat_of KEY: a value from debugfs stats.
stat_of() { awk -v k="$1" '$1 == k { print $2 }' "$DBG/stats"; }

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
	! dmesg | tail -n +"$(( $(cat /tmp/dmesg.mark 2>/dev/null || echo 0) + 1 ))" |
		grep -qE 'WARNING:|BUG:|Oops|Call Trace|general protection'
}

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

# --- shared by the benchmarks ---
now() { awk '{ print $1 }' /proc/uptime; }
wchar() { awk '$1 == "wchar:" { print $2 }' /proc/$1/io; }
# kswapd_pages: pages kswapd has reclaimed since boot (a light writer beside
# a fast buffered hog allocates from memory the hog's clean cache fills).
kswapd_pages() { awk '$1 == "pgsteal_kswapd" { print $2 }' /proc/vmstat; }
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
