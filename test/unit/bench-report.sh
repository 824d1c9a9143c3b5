#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/bench-report on a few lines made up for the purpose: what make
# bench's tables say must be what the raw lines say.
top=$(cd "$(dirname "$0")/../.." && pwd)
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT

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
if [[ $line == *"| 100% |" ]]; then
	echo "ok unit/bench_report_even_median"
else
	echo "FAIL unit/bench_report_even_median: stock 100 100 300 300, pwthrottle 200 x 4 should read 100%: ${line:-no row}"
fi

# The memory table: one row per kernel, bytes as the guest read them.
echo "disk=0 MEMORY series=k task_bytes=128 group_bytes=96 hash_bytes=16384 max_tasks=4096 max_bytes=933888" > "$raw"
line=$("$top/scripts/bench-report" "$raw" "" 2> /dev/null | grep '^| k |')
if [[ $line == "| k | 128 B | 96 B | 16 KiB | 4096 | 912 KiB |" ]]; then
	echo "ok unit/bench_report_memory"
else
	echo "FAIL unit/bench_report_memory: 128 B, 96 B, 16 KiB, 4096, 912 KiB expected: ${line:-no row}"
fi
