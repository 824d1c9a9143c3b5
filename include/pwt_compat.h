/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every difference between the supported kernels lives here, so the rest of
 * pwthrottle reads like one kernel's code. Supported: Debian 12's 6.1,
 * bookworm-backports' 6.12, Debian 13's 6.12 (also PREEMPT_RT) and
 * trixie-backports' 7.x. Kbuild defines the PWT_HAVE_* tests from what the
 * kernel's headers declare.
 */
#ifndef _PWT_COMPAT_H
#define _PWT_COMPAT_H

#include <linux/ftrace.h>
#include <linux/sysctl.h>
#include <linux/writeback.h>
#include <linux/backing-dev.h>

/*
 * Versions are told apart by what the headers provide, not by version
 * numbers, so a distribution kernel with backports builds right too.
 */
#include <linux/pagemap.h>
#include <linux/fs.h>
#include <linux/fs_struct.h>
#include <linux/err.h>
#include <linux/sched.h>

#ifndef BDP_ASYNC
#error "pwthrottle needs balance_dirty_pages_ratelimited_flags() (Linux 6.1 or later)"
#endif

/*
 * Redirecting a traced function: struct ftrace_regs became opaque in 6.12
 * and the setter was renamed with it. Both are macros, so test for the new one.
 */
#ifdef ftrace_regs_set_instruction_pointer
#define pwt_ftrace_set_ip(fregs, ip) ftrace_regs_set_instruction_pointer(fregs, ip)
#else
#define pwt_ftrace_set_ip(fregs, ip) ftrace_instruction_pointer_set(fregs, ip)
#endif

/*
 * What a task has dirtied: ioac.write_bytes grows by a folio's size where
 * the kernel adds its pages to current->nr_dirtied (folio_account_dirtied(),
 * 6.1 to 7.3) and is never reset, where nr_dirtied is zeroed whenever
 * balance_dirty_pages() balances the task. So the bytes between two readings
 * are exact whichever hooked calls we did not see. It also counts what the
 * task wrote O_DIRECT (which calls no hook), and a page its own writeback
 * redirtied counts again: a thread that mixes O_DIRECT and buffered writes
 * is charged its O_DIRECT bytes at its next buffered decision, as pages it
 * dirtied. Where its device keeps up (pwt_decide_dev()) that changes
 * nothing; past the freerun ceiling, or on a congested device, it may be
 * held as an over-dirtier for them. Not modelled: the kernel keeps no
 * per-task count of buffered bytes alone. Debian, like every distribution
 * kernel, has task I/O accounting.
 */
#ifndef CONFIG_TASK_IO_ACCOUNTING
#error "pwthrottle counts dirtied pages in task I/O accounting: needs CONFIG_TASK_IO_ACCOUNTING"
#endif
static __always_inline u64 pwt_written_bytes(const struct task_struct *tsk)
{
	/* Only @tsk adds to it; @tsk is current, or this is a snapshot. */
	return READ_ONCE(tsk->ioac.write_bytes);
}

/*
 * How a function starts on an IBT kernel: ENDBR64, or where the kernel
 * sealed it (apply_seal_endbr(): never called indirectly) the NOP written
 * over it, a different one from 7.3 on (66 0f 1f 00, then 0f 1f 40 d6).
 * Compared with the header's own generators, so no byte string of ours
 * goes stale. True without IBT: nothing comes before the ftrace site.
 */
#ifdef CONFIG_X86_KERNEL_IBT
static inline bool pwt_entry_is_endbr(const void *fn)
{
	u32 insn;

	memcpy(&insn, fn, sizeof(insn));
	return insn == gen_endbr() || insn == gen_endbr_poison();
}
#else
static inline bool pwt_entry_is_endbr(const void *fn)
{
	return true;
}
#endif

/*
 * Sysctl tables: on 6.1 the walker stops at an empty entry. From 6.6
 * register_sysctl() is a macro passing ARRAY_SIZE(), and from 6.11 an empty
 * entry is rejected ("procname is null"); so no sentinel where it is a macro.
 */
#ifdef register_sysctl
#define PWT_SYSCTL_END
#else
#define PWT_SYSCTL_END { }
#endif

/*
 * proc_handler takes a const table from 6.11 on. Kbuild looks at the
 * prototype in the kernel's sysctl.h and defines PWT_HAVE_CONST_CTL_TABLE.
 */
#ifdef PWT_HAVE_CONST_CTL_TABLE
#define PWT_CTL_TABLE const struct ctl_table
#else
#define PWT_CTL_TABLE struct ctl_table
#endif

/*
 * Where the body of a traced function starts: after its ENDBR (IBT
 * kernels, 6.12) and the 5-byte fentry site that ftrace patches. See
 * pwt_call_original in main.c.
 */
#ifdef CONFIG_X86_KERNEL_IBT
#define PWT_BODY_OFFSET 9
#else
#define PWT_BODY_OFFSET 5
#endif

/*
 * PWT_BODY_JUMP(name, prefix): a function @name that jumps into
 * balance_dirty_pages_ratelimited_flags() past its ftrace site, so the
 * call is not redirected again. @prefix goes first: "" for a stub only
 * ever jumped to directly, ASM_ENDBR for one whose address is taken.
 */
#define PWT_BODY_JUMP(name, prefix)					\
	asm(".pushsection .text, \"ax\"\n"				\
	    ".type " #name ", @function\n"				\
	    #name ":\n"							\
	    prefix							\
	    "\tjmp balance_dirty_pages_ratelimited_flags + "		\
	    __stringify(PWT_BODY_OFFSET) "\n"				\
	    ".size " #name ", . - " #name "\n"				\
	    ".popsection\n")

/*
 * The bdi_writeback an inode writes back through. With cgroup writeback
 * (Debian's configs) inode->i_wb is NULL until the inode is attached on
 * its first dirtied folio, and the hook runs before a write dirties its
 * first page (iomap on both kernels, generic_perform_write() from 6.12):
 * inode_to_wb() would hand us that NULL. An unattached inode has nothing
 * dirty of its own; the device's root wb stands for it. The caller holds
 * rcu_read_lock(): a wb switched away from is freed after a grace period.
 */
static inline struct bdi_writeback *pwt_inode_wb(struct inode *inode)
{
#ifdef CONFIG_CGROUP_WRITEBACK
	struct bdi_writeback *wb = READ_ONCE(inode->i_wb);

	if (wb)
		return wb;
#endif
	return &inode_to_bdi(inode)->wb;
}

/*
 * Start WB_SYNC_NONE writeback of at most wbc->nr_to_write pages of one
 * file. 6.19 removed filemap_fdatawrite_wbc(); what replaced it either
 * has no page budget (filemap_flush_range()) or is exported to btrfs alone
 * (filemap_flush_nr()). So on such kernels do what it did, from exported
 * pieces: attach the inode's wb to the wbc (cgroup writeback accounting),
 * the filesystem's ->writepages(), detach, as filemap_writeback() does.
 * What this skips of do_writepages() is its -ENOMEM retry, which is for
 * WB_SYNC_ALL only, and its write-bandwidth bookkeeping: after the device
 * has been idle for over a second, wb_bandwidth_estimate_start() resets
 * the bandwidth sample's start. When our writeback is the first after such
 * a pause, the kernel's next sample spans the idle time and underestimates
 * the device's write bandwidth once, until later samples (every 200 ms of
 * writeback) correct it. It also skips do_writepages()'s periodic update
 * under constant writeback; the estimate, which pwthrottle's device model
 * reads (device.c), is then kept current by the other updaters, the end of
 * an inode's writeback (wb_inode_writeback_end()) and the flusher: on 7.3
 * a 20 MiB/s stick's estimate follows it within seconds (device.sh's
 * pwt_throttle events).
 */
static inline int pwt_fdatawrite_wbc(struct address_space *mapping,
				     struct writeback_control *wbc)
{
#ifdef PWT_HAVE_FDATAWRITE_WBC
	return filemap_fdatawrite_wbc(mapping, wbc);
#else
	int ret;

	if (!mapping_tagged(mapping, PAGECACHE_TAG_DIRTY) ||
	    !mapping->a_ops->writepages)
		return 0;
	wbc_attach_fdatawrite_inode(wbc, mapping->host);
	ret = mapping->a_ops->writepages(mapping, wbc);
	wbc_detach_inode(wbc);
	return ret;
#endif
}

/*
 * sched_process_exit's probe: the tracepoint gained "bool group_dead" in
 * 6.16. A probe must match the tracepoint's prototype exactly (kCFI checks
 * indirect calls by type), so the extra argument is declared where it
 * exists, and ignored.
 */
#ifdef PWT_HAVE_EXIT_GROUP_DEAD
#define PWT_EXIT_PROBE(name) \
	void name(void *data, struct task_struct *p, bool group_dead)
#else
#define PWT_EXIT_PROBE(name) void name(void *data, struct task_struct *p)
#endif

/*
 * Open a file by its path as userspace sees it, from any task (the sysctl
 * refresh runs in a kworker). Before 7.0 kernel threads share init's
 * fs_struct and a plain filp_open() resolves "/proc/..." there. From 7.0
 * they start in an empty root, and scoped_with_init_fs() lends them
 * userspace's for the lookup.
 */
static inline struct file *pwt_filp_open_init_fs(const char *path)
{
#ifdef PWT_HAVE_SCOPED_INIT_FS
	struct file *f = ERR_PTR(-ENOENT);

	scoped_with_init_fs()
		f = filp_open(path, O_RDONLY, 0);
	return f;
#else
	return filp_open(path, O_RDONLY, 0);
#endif
}

#endif /* _PWT_COMPAT_H */
