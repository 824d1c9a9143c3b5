#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/bench-report on a few lines made up for the purpose: what make
# bench's tables say must be what the raw lines say.
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/common.sh"
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
echo "KTAP version 1"

# Pooled runs give a cell an even count of values: its median is the mean
# of the middle two, not the lower one (which read a lone hog on trixie's
# 6.12 as 103% of stock where the six runs of each say 94%).
for v in 100 100 300 300; do
	echo "disk=0 HOG series=k mode=stock case=fastab hog=fast phase=alone round=1 disk_mibps=$v"
done > "$raw"
for v in 200 200 200 200; do
	echo "disk=0 HOG series=k mode=pwthrottle case=fastab hog=fast phase=alone round=1 disk_mibps=$v"
done >> "$raw"
line=$("$top/scripts/bench-report" "$raw" "" 2> /dev/null | grep '^| k |')
[[ $line == *"| 100% |" ]]
ktap_verdict $? unit/bench_report_even_median "stock 100 100 300 300, pwthrottle 200 x 4 should read 100%: ${line:-no row}"

# The memory table: one row per kernel, bytes as the guest read them.
echo "disk=0 MEMORY series=k task_bytes=128 group_bytes=96 hash_bytes=16384 max_tasks=4096 max_bytes=933888" > "$raw"
line=$("$top/scripts/bench-report" "$raw" "" 2> /dev/null | grep '^| k |')
[[ $line == "| k | 128 B | 96 B | 16 KiB | 4096 | 912 KiB |" ]]
ktap_verdict $? unit/bench_report_memory "128 B, 96 B, 16 KiB, 4096, 912 KiB expected: ${line:-no row}"

# The fast case's O_DIRECT control: loop ratio and the hog's rate, stock only.
{
	for v in 0.40 0.40 0.40; do
		echo "disk=0 RESULT series=k mode=stock case=fast hog=none loop=1 secs=$v"
		echo "disk=0 RESULT series=k mode=stock case=fast hog=direct loop=1 secs=0.60"
		echo "disk=0 RESULT series=k mode=stock case=fast hog=fast loop=1 secs=0.50"
	done
	echo "disk=0 HOG series=k mode=stock case=fast hog=direct phase=alone disk_mibps=300.0"
	echo "disk=0 HOG series=k mode=stock case=fast hog=direct phase=loops disk_mibps=150.0"
	echo "disk=0 HOG series=k mode=stock case=fast hog=fast phase=alone disk_mibps=250.0"
} > "$raw"
line=$("$top/scripts/bench-report" "$raw" "" 2> /dev/null | grep '^| k | control: O_DIRECT')
[[ $line == "| k | control: O_DIRECT hog on the fast disk, no dirty page | stock | 0.40 | 0.60 | 1.50 | 300.0 | | 150.0 | 50% | | | | |" ]]
ktap_verdict $? unit/bench_report_direct_control "loop 0.40 -> 0.60 (1.50), hog 300.0 then 150.0 (50%) expected: ${line:-no row}"

# Where the vCPUs went beside the fast disk's hog: medians of the runs
# pooled, and what the hog, the workers and kswapd leave of the busy time;
# the dropping hog's control row beside the O_DIRECT one.
{
	echo "disk=0 RESULT series=k mode=stock case=fast hog=none loop=1 secs=0.40"
	echo "disk=0 RESULT series=k mode=stock case=fast hog=fast loop=1 secs=0.60"
	echo "disk=0 RESULT series=k mode=stock case=fast hog=drop loop=1 secs=0.50"
	echo "disk=0 HOG series=k mode=stock case=fast hog=drop phase=alone disk_mibps=200.0"
	echo "disk=0 HOG series=k mode=stock case=fast hog=drop phase=loops disk_mibps=150.0 cpu_all=1.90 cpu_hog=0.80 cpu_kworker=0.40 cpu_kswapd=0.00"
	echo "disk=0 HOG series=k mode=stock case=fast hog=fast phase=loops disk_mibps=300.0 cpu_all=1.95 cpu_hog=0.60 cpu_kworker=0.35 cpu_kswapd=0.25"
	echo "disk=0 HOG series=k mode=stock case=fast hog=fast phase=loops disk_mibps=300.0 cpu_all=1.85 cpu_hog=0.50 cpu_kworker=0.45 cpu_kswapd=0.15"
} > "$raw"
out=$("$top/scripts/bench-report" "$raw" "" 2> /dev/null)
line=$(grep '^| k | buffered | stock' <<< "$out")
[[ $line == "| k | buffered | stock | 1.50 | 1.90 | 0.55 | 0.40 | 0.20 | 0.75 |" ]]
ktap_verdict $? unit/bench_report_cpu "ratio 1.50, busy 1.90 = hog 0.55 + kworker 0.40 + kswapd 0.20 + left 0.75 expected: ${line:-no row}"
line=$(grep '^| k | control: buffered' <<< "$out")
[[ $line == "| k | control: buffered hog dropping its pages 256 MiB behind it | stock | 0.40 | 0.50 | 1.25 | 200.0 | | 150.0 | 75% | | | | |" ]]
ktap_verdict $? unit/bench_report_drop_control "loop 1.25, hog 200.0 then 150.0 (75%) expected: ${line:-no row}"

# A latency case is one disk, named with its milliseconds, fsyncs included.
{
	echo "disk=20 RESULT series=k mode=pwthrottle case=latency20 hog=none loop=1 secs=0.40"
	echo "disk=20 RESULT series=k mode=pwthrottle case=latency20 hog=disk loop=1 secs=0.44"
	echo "disk=20 FSYNC series=k mode=pwthrottle case=latency20 hog=none secs=1.0"
	echo "disk=20 FSYNC series=k mode=pwthrottle case=latency20 hog=disk secs=3.0"
	echo "disk=20 HOG series=k mode=pwthrottle case=latency20 hog=disk phase=alone disk_mibps=18.0"
} > "$raw"
line=$("$top/scripts/bench-report" "$raw" "" 2> /dev/null | grep '^| k | one disk')
[[ $line == "| k | one disk, 20 MiB/s, writes 20 ms late (dm-delay) | pwthrottle | 0.40 | 0.44 | 1.10 | 18.0 | - | "*" | 1.0 | 3.0 | 3.0 | - |" ]]
ktap_verdict $? unit/bench_report_latency "one disk, 20 MiB/s, writes 20 ms late; loop 1.10, fsync 3.0 expected: ${line:-no row}"

# A hog's rate in runs pooled is their median too, not the last run's.
{
	echo "disk=20 HOG series=k mode=stock case=slow hog=disk phase=alone disk_mibps=20.0"
	echo "disk=20 HOG series=k mode=stock case=slow hog=disk phase=alone disk_mibps=18.0"
	echo "disk=20 HOG series=k mode=pwthrottle case=slow hog=disk phase=alone disk_mibps=19.0"
	echo "disk=20 RESULT series=k mode=stock case=slow hog=none loop=1 secs=0.40"
	echo "disk=20 RESULT series=k mode=pwthrottle case=slow hog=none loop=1 secs=0.40"
} > "$raw"
line=$("$top/scripts/bench-report" "$raw" "" 2> /dev/null | grep '^| k | one disk, 20 MiB/s | stock')
[[ $line == "| k | one disk, 20 MiB/s | stock | 0.40 | "*" | 19.0 | 100% | "* ]]
ktap_verdict $? unit/bench_report_hog_pooled "stock alone 20.0 and 18.0 pooled should read 19.0: ${line:-no row}"

# The fast path: one row per kernel and kind of write, the fastest of the
# runs, x floor = what pwthrottle adds over what the redirect floor adds;
# a line without write= is a 4 KiB rewrite, as they all were before.
{
	for m in stock:1000 empty:1090 redirect:1100 off:1105 pwthrottle:1150; do
		echo "disk=0 OVERHEAD series=k mode=${m%:*} run=1 write=64k ns_per_write=${m#*:}"
		echo "disk=0 OVERHEAD series=k mode=${m%:*} run=2 write=64k ns_per_write=$((${m#*:} + 7))"
	done
	for m in stock:500 redirect:600 off:610 pwthrottle:720; do
		echo "disk=0 OVERHEAD series=k mode=${m%:*} run=1 ns_per_write=${m#*:} calls=0"
	done
} > "$raw"
rows=$("$top/scripts/bench-report" "$raw" "" 2> /dev/null | grep '^| k |')
[[ $rows == *"| k | 64k | 1000 | 1090 | 1100 | 1105 | 1150 | 150 | 100 | 1.50 | 15.0% |"* &&
	$rows == *"| k | 4k | 500 | - | 600 | 610 | 720 | 220 | 100 | 2.20 | 44.0% |"* ]]
ktap_verdict $? unit/bench_report_overhead "64k x floor 1.50, 4k (no write=) 2.20 expected: ${rows:-no row}"

# The knobs off are rows of their own after pwthrottle, each before its
# other values: sync_hold_ms=0 (pwthrottle_hold0, every one-disk
# pwthrottle row before that knob), then pwthrottle_holdN; sync_inflight_ms
# =0 (pwthrottle_sync0, every one before that one), pwthrottle_syncN; then
# pwthrottle_N. Each with its fsync ratio and the hog's rate over the
# loops (phase=loopsonly) and while the fsyncs ran (phase=fsyncs), % of
# its rate alone, where there are such lines.
{
	for m in stock pwthrottle pwthrottle_hold0 pwthrottle_hold50 pwthrottle_sync0 pwthrottle_sync12 pwthrottle_25; do
		echo "disk=20 RESULT series=k mode=$m case=slow hog=none loop=1 secs=0.40"
		echo "disk=20 RESULT series=k mode=$m case=slow hog=disk loop=1 secs=0.44"
		echo "disk=20 FSYNC series=k mode=$m case=slow hog=none secs=0.25"
		echo "disk=20 HOG series=k mode=$m case=slow hog=disk phase=alone disk_mibps=20.0"
		echo "disk=20 HOG series=k mode=$m case=slow hog=disk phase=loops disk_mibps=20.0"
	done
	echo "disk=20 HOG series=k mode=pwthrottle case=slow hog=disk phase=loopsonly disk_mibps=19.8"
	echo "disk=20 HOG series=k mode=pwthrottle case=slow hog=disk phase=fsyncs disk_mibps=10.0"
	echo "disk=20 HOG series=k mode=pwthrottle_hold0 case=slow hog=disk phase=fsyncs disk_mibps=19.0"
	echo "disk=20 FSYNC series=k mode=stock case=slow hog=disk secs=25"
	echo "disk=20 FSYNC series=k mode=pwthrottle case=slow hog=disk secs=0.5"
	echo "disk=20 FSYNC series=k mode=pwthrottle_hold0 case=slow hog=disk secs=1.5"
	echo "disk=20 FSYNC series=k mode=pwthrottle_hold50 case=slow hog=disk secs=0.75"
	echo "disk=20 FSYNC series=k mode=pwthrottle_sync0 case=slow hog=disk secs=2.5"
	echo "disk=20 FSYNC series=k mode=pwthrottle_sync12 case=slow hog=disk secs=0.3"
	echo "disk=20 FSYNC series=k mode=pwthrottle_25 case=slow hog=disk secs=0.5"
} > "$raw"
rows=$("$top/scripts/bench-report" "$raw" "" 2> /dev/null | grep '^| k | one disk, 20 MiB/s' | cut -d'|' -f4,12-)
[[ $rows == " stock | 0.25 | 25 | 100.0 | - |"*" pwthrottle | 0.25 | 0.5 | 2.0 | 99% / 50% |"*" pwthrottle_hold0 | 0.25 | 1.5 | 6.0 | - / 95% |"*" pwthrottle_hold50 | 0.25 | 0.75 | 3.0 | - |"*" pwthrottle_sync0 | 0.25 | 2.5 | 10.0 | - |"*" pwthrottle_sync12 | 0.25 | 0.3 | 1.2 | - |"*" pwthrottle_25 | 0.25 | 0.5 | 2.0 | - |" ]] &&
	"$top/scripts/bench-report" "$raw" "" 2> /dev/null | grep -q '^| k | one disk, 20 MiB/s | pwthrottle | 0.40 | 0.44 | 1.10 | 20.0 | 100% | 20.0 | 100% |'
ktap_verdict $? unit/bench_report_knobs_off "stock, pwthrottle, _hold0, _hold50, _sync0, _sync12, _25 in that order, fsync 100x, 2x (hog 99% over the loops, 50% over the fsyncs), 6x (- and 95%), 3x, 10x, 1.2x, 2x: ${rows:-no row}"
