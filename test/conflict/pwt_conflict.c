// SPDX-License-Identifier: GPL-2.0
/*
 * pwt_conflict: test-only ftrace users of balance_dirty_pages_ratelimited_flags(),
 * the function pwthrottle hooks. mode= chooses which:
 *
 * claim (default): a stand-in for a livepatch or another module that
 *   already redirects the function. It registers an ftrace_ops with
 *   FTRACE_OPS_FL_IPMODIFY, as pwthrottle does, but its callback leaves the
 *   instruction pointer alone, so the function runs as stock. ftrace allows
 *   one IPMODIFY user per function: with this loaded, pwthrottle must fail
 *   to load with -EBUSY and say why; with pwthrottle loaded, this fails the
 *   same way.
 * empty: an ftrace_ops without IPMODIFY whose callback does nothing: what
 *   any tracer of the function costs each call.
 * redirect: an IPMODIFY ops whose callback sends each call to a stub that
 *   jumps past the ftrace site into the original's body, as pwthrottle's
 *   pwt_call_original does: the least a module that redirects the function
 *   can cost, pwthrottle's floor (the overhead benchmark).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/ftrace.h>
#include <linux/writeback.h>
#include <asm/ibt.h>
#include "pwt_compat.h"

static char *mode = "claim";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "claim (IPMODIFY, no-op; default), empty (no IPMODIFY), redirect (to the body)");

/* Runs on every call while registered: do nothing, the original runs. */
static void notrace pwt_conflict_thunk(unsigned long ip, unsigned long parent_ip,
				       struct ftrace_ops *ops, struct ftrace_regs *fregs)
{
}

/*
 * The original, entered past its ftrace site (so not redirected again).
 * Its address is taken (the callback sets it as the new ip), so on IBT
 * kernels it starts with ENDBR like any function whose address is taken.
 */
int pwt_conflict_body(struct address_space *mapping, unsigned int flags);
PWT_BODY_JUMP(pwt_conflict_body, ASM_ENDBR);

static void notrace pwt_conflict_redirect(unsigned long ip, unsigned long parent_ip,
					  struct ftrace_ops *ops, struct ftrace_regs *fregs)
{
	pwt_ftrace_set_ip(fregs, (unsigned long)pwt_conflict_body);
}

static struct ftrace_ops pwt_conflict_ops = {
	.func	= pwt_conflict_thunk,
	.flags	= FTRACE_OPS_FL_IPMODIFY | FTRACE_OPS_FL_RECURSION,
};

static int __init pwt_conflict_init(void)
{
	int ret;

	if (!strcmp(mode, "empty")) {
		pwt_conflict_ops.flags &= ~FTRACE_OPS_FL_IPMODIFY;
	} else if (!strcmp(mode, "redirect")) {
		pwt_conflict_ops.func = pwt_conflict_redirect;
	} else if (strcmp(mode, "claim")) {
		pr_err("mode=%s: want claim, empty or redirect\n", mode);
		return -EINVAL;
	}
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
	pr_info("balance_dirty_pages_ratelimited_flags: %s\n", mode);
	return 0;
}

static void __exit pwt_conflict_exit(void)
{
	unregister_ftrace_function(&pwt_conflict_ops);
	ftrace_free_filter(&pwt_conflict_ops);
}

module_init(pwt_conflict_init);
module_exit(pwt_conflict_exit);
MODULE_DESCRIPTION("pwthrottle test: other ftrace users of the hooked function");
MODULE_LICENSE("GPL");
