# SPDX-License-Identifier: GPL-2.0
# Sourced by the scripts beside it: what they share, said once.

# The project's cache: kernels, sources, build roots (README, "Cache").
CACHE=${PWT_CACHE:-/var/tmp/pwthrottle}

# The version, from its one home: Kbuild's PWT_VERSION.
pwt_version() {
	sed -n 's/^PWT_VERSION *:= *//p' "$(dirname "${BASH_SOURCE[0]}")/../Kbuild"
}
