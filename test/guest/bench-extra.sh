# SPDX-License-Identifier: GPL-2.0
# Benchmarks beyond the 2005 experiment, stock vs pwthrottle in one boot:
#   fairness: two equal hogs (two jobs) for 20 s; each one's share of what
#   both wrote.
# (The fast path's cost is overhead.sh, in a guest of its own.)
# Machine-readable lines on fd 3:
#   FAIR series=6.1 mode=stock a_mibps=9.8 b_mibps=10.1
. /pwt/lib.sh

mount_scratch

fair() {
	local a b a0 b0 a1 b1 t0 t1 dt
	setsid /bin/pwt-writer /mnt/a 3000 -t 600 > /dev/null 2>&1 &
	a=$!
	setsid /bin/pwt-writer /mnt/b 3000 -t 600 > /dev/null 2>&1 &
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
need_load
fair pwthrottle
unload

umount /mnt
finish
