# SPDX-License-Identifier: GPL-2.0
# Benchmarks beyond the 2005 experiment, stock vs pwthrottle in one boot:
#   fairness: two equal hogs for 20 s; each one's share of what both wrote.
#   overhead: 4 KiB buffered rewrites of a 32 MiB file, far below the dirty
#     limits, module loaded vs not, alternated runs; the cost per hooked call.
# Machine-readable lines on fd 3:
#   FAIR series=6.1 mode=stock a_mibps=9.8 b_mibps=10.1
#   OVERHEAD series=6.1 mode=stock|pwthrottle|off run=2 secs=3.21 calls=163840
. /pwt/lib.sh

RUNS=${1:-5}
mount_scratch
now() { awk '{ print $1 }' /proc/uptime; }
wchar() { awk '$1 == "wchar:" { print $2 }' /proc/$1/io; }
rate() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.1f\n", b / 1048576 / s }'; }

fair() {
	local a b a0 b0 a1 b1 t0 t1 dt
	/bin/pwt-writer /mnt/a 3000 -t 600 > /dev/null 2>&1 &
	a=$!
	/bin/pwt-writer /mnt/b 3000 -t 600 > /dev/null 2>&1 &
	b=$!
	sleep 10	# past the start-up burst and the first window
	a0=$(wchar $a); b0=$(wchar $b); t0=$(now)
	sleep 20
	a1=$(wchar $a); b1=$(wchar $b); t1=$(now)
	kill $a $b
	wait $a $b 2>/dev/null
	rm -f /mnt/a /mnt/b
	sync
	dt=$(awk -v x="$t0" -v y="$t1" 'BEGIN { print y - x }')
	say "FAIR series=$SERIES mode=$1 a_mibps=$(rate $((a1 - a0)) $dt) b_mibps=$(rate $((b1 - b0)) $dt)"
}

fair stock
load
fair pwthrottle
unload

# 20 x rewrite of the same 32 MiB in 4 KiB writes: 163840 hooked calls, no
# new dirty pages after the first pass, nothing near the dirty limits.
dd if=/dev/zero of=/mnt/ov bs=1M count=32 2>/dev/null
sync
rewrite() {
	local t0 t1 i=0
	t0=$(now)
	while [ $i -lt 20 ]; do
		dd if=/dev/zero of=/mnt/ov bs=4k count=8192 conv=notrunc 2>/dev/null
		i=$((i + 1))
	done
	t1=$(now)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f\n", b - a }'
}
rewrite > /dev/null	# warm the page cache and the dentry
r=1
while [ $r -le "$RUNS" ]; do
	say "OVERHEAD series=$SERIES mode=stock run=$r secs=$(rewrite) calls=0"
	load
	c0=$(stat_of calls)
	s=$(rewrite)
	say "OVERHEAD series=$SERIES mode=pwthrottle run=$r secs=$s calls=$(($(stat_of calls) - c0))"
	echo 0 > $SYSCTL
	say "OVERHEAD series=$SERIES mode=off run=$r secs=$(rewrite) calls=0"
	unload
	r=$((r + 1))
done
rm -f /mnt/ov
umount /mnt
finish
