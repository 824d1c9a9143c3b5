// SPDX-License-Identifier: GPL-2.0
/*
 * pwt_conflict: test-only stand-in for a livepatch or another module that
 * already redirects balance_dirty_pages_ratelimited_flags(). It registers
 * an ftrace_ops with FTRACE_OPS_FL_IPMODIFY on that function, as pwthrottle
 * does, but its callback leaves the instruction pointer alone, so the
 * function runs as stock. ftrace allows one IPMODIFY user per function:
 * with this loaded, pwthrottle must fail to load with -EBUSY and say why;
 * with pwthrottle loaded, this fails the same way.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/ftrace.h>
#include <linux/writeback.h>

/* Runs on every call while registered: do nothing, the original runs. */
static void notrace pwt_conflict_thunk(unsigned long ip, unsigned long parent_ip,
				       struct ftrace_ops *ops, struct ftrace_regs *fregs)
{
}

static struct ftrace_ops pwt_conflict_ops = {
	.func	= pwt_conflict_thunk,
	.flags	= FTRACE_OPS_FL_IPMODIFY | FTRACE_OPS_FL_RECURSION,
};

static int __init pwt_conflict_init(void)
{
	int ret;

	ret = ftrace_set_filter_ip(&pwt_conflict_ops,
				   (unsigned long)balance_dirty_pages_ratelimited_flags,
				   0, 0);
	if (ret)
		return ret;
	ret = register_ftrace_function(&pwt_conflict_ops);
	if (ret) {
		pr_err("cannot claim balance_dirty_pages_ratelimited_flags: %d\n", ret);
		ftrace_free_filter(&pwt_conflict_ops);
		return ret;
	}
	pr_info("claimed balance_dirty_pages_ratelimited_flags (IPMODIFY, no-op)\n");
	return 0;
}

static void __exit pwt_conflict_exit(void)
{
	unregister_ftrace_function(&pwt_conflict_ops);
	ftrace_free_filter(&pwt_conflict_ops);
}

module_init(pwt_conflict_init);
module_exit(pwt_conflict_exit);
MODULE_DESCRIPTION("pwthrottle test: a conflicting IPMODIFY ftrace user");
MODULE_LICENSE("GPL");
