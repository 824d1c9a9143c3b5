// SPDX-License-Identifier: GPL-2.0
/*
 * pwtop: who dirties page cache, and who is made to wait for it.
 *
 *   pwtop [--once SECS] [--json] [--verbose]
 *
 * Per task (thread): its dirty rate and prediction as pwthrottle's
 * decisions see them (pwthrottle:pwt_decision), the forced writebacks
 * pwthrottle made it do and how long they held it (pwthrottle:pwt_throttle),
 * and the sleeps the stock throttle in balance_dirty_pages() gave it
 * (writeback:balance_dirty_pages with pause > 0). Without pwthrottle
 * loaded, only the last columns are filled in.
 *
 * Every second a table of the tasks active in that second; --once SECS
 * prints one table over SECS seconds and exits; --json prints JSON instead,
 * one task per line.
 *
 * While pwtop runs, the kernel holds a reference on pwthrottle (perf
 * events pin the module whose tracepoints they use): rmmod fails with
 * EBUSY until pwtop exits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "pwtop.h"
#include "pwtop.skel.h"

#define TOP_ROWS 20
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char *const end_names[PWTOP_NR_ENDS] = {
	"done", "not_over", "deadline", "killed", "unloading", "kept_up",
};

static bool verbose;
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (level == LIBBPF_DEBUG || (level == LIBBPF_INFO && !verbose))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static const char *tracefs(void)
{
	static const char *const dirs[] = {
		"/sys/kernel/tracing",
		"/sys/kernel/debug/tracing",
	};
	char path[256];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		snprintf(path, sizeof(path), "%s/events", dirs[i]);
		if (access(path, R_OK) == 0)
			return dirs[i];
	}
	return NULL;
}

/*
 * Find @name in an event's format file, lines like
 *   field:long pause;	offset:72;	size:8;	signed:1;
 * Returns 0, -ENOENT without the event, -ESRCH without the field.
 */
static int format_field(const char *tfs, const char *event, const char *name,
			struct pwtop_field *f)
{
	char path[512], line[512], *decl, *semi, *p;
	unsigned int off, size;
	FILE *fp;
	int ret = -ESRCH;

	snprintf(path, sizeof(path), "%s/events/%s/format", tfs, event);
	fp = fopen(path, "r");
	if (!fp)
		return -ENOENT;
	while (fgets(line, sizeof(line), fp)) {
		decl = strstr(line, "field:");
		semi = decl ? strchr(decl, ';') : NULL;
		if (!semi)
			continue;
		/* "field:unsigned long limit" or "field:char bdi[32]" */
		*semi = '\0';
		p = strchr(decl, '[');
		if (p)
			*p = '\0';
		p = strrchr(decl, ' ');
		if (!p || strcmp(p + 1, name))
			continue;
		p = strstr(semi + 1, "offset:");
		if (!p || sscanf(p, "offset:%u; size:%u;", &off, &size) != 2)
			continue;
		if (size == 1 || size == 2 || size == 4 || size == 8) {
			f->off = off;
			f->size = size;
			ret = 0;
		}
		break;
	}
	fclose(fp);
	return ret;
}

struct want {
	const char *event;
	const char *name;
	struct pwtop_field *f;
};

/* Fill @l; returns false, having said why, if an event lacks a field. */
static bool read_layout(const char *tfs, struct pwtop_layout *l, bool pwt)
{
	const struct want wants[] = {
		{ "pwthrottle/pwt_decision", "future_dirty", &l->dec_future_dirty },
		{ "pwthrottle/pwt_decision", "dirtied", &l->dec_dirtied },
		{ "pwthrottle/pwt_decision", "over", &l->dec_over },
		{ "pwthrottle/pwt_decision", "throttle", &l->dec_throttle },
		{ "pwthrottle/pwt_throttle", "pages", &l->thr_pages },
		{ "pwthrottle/pwt_throttle", "wait_us", &l->thr_wait_us },
		{ "pwthrottle/pwt_throttle", "reason", &l->thr_reason },
		{ "writeback/balance_dirty_pages", "pause", &l->bdp_pause },
		{ "writeback/balance_dirty_pages", "task_ratelimit",
		  &l->bdp_task_ratelimit },
	};
	size_t i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(wants); i++) {
		if (!pwt && !strncmp(wants[i].event, "pwthrottle/", 11))
			continue;
		ret = format_field(tfs, wants[i].event, wants[i].name,
				   wants[i].f);
		if (ret) {
			fprintf(stderr, "pwtop: %s/events/%s/format: %s\n", tfs,
				wants[i].event,
				ret == -ENOENT ? "cannot read" : "no such field");
			if (ret == -ESRCH)
				fprintf(stderr, "pwtop: (looking for %s)\n",
					wants[i].name);
			return false;
		}
	}
	return true;
}

/* One read of the map. */
struct snap {
	struct pwtop_task *t;
	size_t n;
};

static int by_pid(const void *a, const void *b)
{
	const struct pwtop_task *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

static int read_snap(int fd, struct snap *s)
{
	__u32 key, next, *prev = NULL;
	size_t cap = 0;

	s->n = 0;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		if (s->n == cap) {
			cap = cap ? 2 * cap : 256;
			s->t = realloc(s->t, cap * sizeof(*s->t));
			if (!s->t)
				return -ENOMEM;
		}
		/* Evicted between the two calls: skip it. */
		if (bpf_map_lookup_elem(fd, &next, &s->t[s->n]) == 0)
			s->n++;
		key = next;
		prev = &key;
	}
	qsort(s->t, s->n, sizeof(*s->t), by_pid);
	return 0;
}

/* A task's counters over the interval: now minus then. */
struct row {
	struct pwtop_task d;
	double rate;	/* dirtied bytes/s */
};

static void diff(const struct pwtop_task *now, const struct pwtop_task *then,
		 struct pwtop_task *d)
{
	size_t i;

	*d = *now;
	/* A new entry for the pid (evicted, or the pid reused) starts at 0. */
	if (!then || then->decisions > now->decisions ||
	    then->bdp_events > now->bdp_events ||
	    then->throttles > now->throttles)
		return;
	d->decisions -= then->decisions;
	d->dirtied -= then->dirtied;
	d->throttle_verdicts -= then->throttle_verdicts;
	d->throttles -= then->throttles;
	d->throttle_pages -= then->throttle_pages;
	d->throttle_us -= then->throttle_us;
	for (i = 0; i < PWTOP_NR_ENDS; i++)
		d->ends[i] -= then->ends[i];
	d->bdp_events -= then->bdp_events;
	d->bdp_pauses -= then->bdp_pauses;
	d->bdp_pause_ms -= then->bdp_pause_ms;
}

static int by_activity(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->rate != y->rate)
		return x->rate < y->rate ? 1 : -1;
	if (x->d.throttle_us != y->d.throttle_us)
		return x->d.throttle_us < y->d.throttle_us ? 1 : -1;
	if (x->d.bdp_pause_ms != y->d.bdp_pause_ms)
		return x->d.bdp_pause_ms < y->d.bdp_pause_ms ? 1 : -1;
	return (x->d.pid > y->d.pid) - (x->d.pid < y->d.pid);
}

static bool active(const struct pwtop_task *d)
{
	return d->decisions || d->throttles || d->bdp_events;
}

struct vmstat {
	unsigned long long dirty, writeback, thresh;
};

static void read_vmstat(struct vmstat *v)
{
	char name[64];
	unsigned long long val;
	FILE *fp = fopen("/proc/vmstat", "r");

	memset(v, 0, sizeof(*v));
	if (!fp)
		return;
	while (fscanf(fp, "%63s %llu", name, &val) == 2) {
		if (!strcmp(name, "nr_dirty"))
			v->dirty = val;
		else if (!strcmp(name, "nr_writeback"))
			v->writeback = val;
		else if (!strcmp(name, "nr_dirty_threshold"))
			v->thresh = val;
	}
	fclose(fp);
}

static void json_string(const char *s, size_t max)
{
	size_t i;

	putchar('"');
	for (i = 0; i < max && s[i]; i++) {
		unsigned char c = s[i];

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

/* Task names may hold anything; the table shows them printable. */
static void safe_comm(const char *s, char *out)
{
	size_t i;

	for (i = 0; i < PWTOP_COMM_LEN - 1 && s[i]; i++)
		out[i] = (s[i] > 0x20 && s[i] < 0x7f) ? s[i] : '?';
	out[i] = '\0';
}

/* JSON members after the first: , "KEY": VALUE */
static void jnum(const char *key, unsigned long long v)
{
	printf(", \"%s\": %llu", key, v);
}

static void jdbl(const char *key, double v)
{
	printf(", \"%s\": %.1f", key, v);
}

static void print_json(const struct row *rows, size_t n, double secs,
		       bool pwt, long page, const struct vmstat *v)
{
	const struct pwtop_task *d;
	size_t i, j;

	printf("{\"interval_s\": %.3f", secs);
	printf(", \"pwthrottle\": %s", pwt ? "true" : "false");
	jnum("page_size", page);
	jnum("nr_dirty", v->dirty);
	jnum("nr_writeback", v->writeback);
	jnum("nr_dirty_threshold", v->thresh);
	printf(", \"tasks\": [\n");
	for (i = 0; i < n; i++) {
		d = &rows[i].d;
		printf(" {\"pid\": %u", d->pid);
		jnum("tgid", d->tgid);
		printf(", \"comm\": ");
		json_string(d->comm, sizeof(d->comm));
		jdbl("dirty_kBps", rows[i].rate / 1000);
		jnum("dirtied_pages", d->dirtied);
		jnum("future_dirty", d->future_dirty);
		jnum("over", d->over);
		jnum("decisions", d->decisions);
		jnum("throttle_verdicts", d->throttle_verdicts);
		jnum("pwt_throttles", d->throttles);
		jnum("pwt_pages", d->throttle_pages);
		jdbl("pwt_ms", d->throttle_us / 1000.0);
		printf(", \"pwt_ends\": {");
		for (j = 0; j < PWTOP_NR_ENDS; j++)
			printf("%s\"%s\": %llu", j ? ", " : "", end_names[j],
			       (unsigned long long)d->ends[j]);
		printf("}");
		jnum("bdp_events", d->bdp_events);
		jnum("bdp_pauses", d->bdp_pauses);
		jnum("bdp_pause_ms", d->bdp_pause_ms);
		jnum("bdp_task_ratelimit_kBps", d->bdp_task_ratelimit);
		printf("}%s\n", i + 1 < n ? "," : "");
	}
	printf("]}\n");
}

static void print_table(const struct row *rows, size_t n, size_t max,
			double secs, bool pwt, long page,
			const struct vmstat *v)
{
	double mib = 1024.0 * 1024 / page;
	char comm[PWTOP_COMM_LEN];
	size_t i;

	printf("pwtop: %.1f s  dirty %.1f MiB  writeback %.1f MiB  limit %.1f MiB  pwthrottle %s\n",
	       secs, v->dirty / mib, v->writeback / mib, v->thresh / mib,
	       pwt ? "loaded" : "NOT loaded");
	printf("%7s %-15s %9s %9s %4s | %8s %9s | %8s %9s\n", "PID", "COMM",
	       "DIRTY", "PREDICT", "OVER", "PWT_THR", "PWT_MS", "BDP_PAUS",
	       "BDP_MS");
	printf("%7s %-15s %9s %9s %4s | %8s %9s | %8s %9s\n", "", "", "MB/s",
	       "MiB", "", "", "", "", "");
	for (i = 0; i < n && i < max; i++) {
		const struct pwtop_task *d = &rows[i].d;

		safe_comm(d->comm, comm);
		if (d->decisions || d->throttles)
			printf("%7u %-15s %9.1f %9.1f %4s", d->pid, comm,
			       rows[i].rate / 1e6, d->future_dirty / mib,
			       d->over ? "yes" : "no");
		else
			printf("%7u %-15s %9s %9s %4s", d->pid, comm, "-", "-",
			       "-");
		printf(" | %8llu %9.0f | %8llu %9llu\n",
		       (unsigned long long)d->throttles, d->throttle_us / 1000.0,
		       (unsigned long long)d->bdp_pauses,
		       (unsigned long long)d->bdp_pause_ms);
	}
	if (n > max)
		printf("(%zu more)\n", n - max);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Sleep @secs, cut short by SIGINT/SIGTERM. */
static void nap(double secs)
{
	double until = now_s() + secs, left;
	struct timespec ts;

	while (!stop && (left = until - now_s()) > 0) {
		ts.tv_sec = (time_t)left;
		ts.tv_nsec = (long)((left - ts.tv_sec) * 1e9);
		nanosleep(&ts, NULL);
	}
}

static void usage(FILE *to)
{
	fprintf(to,
		"pwtop [--once SECS] [--json] [--verbose]\n"
		"  every second, per task: dirty rate and prediction (pwthrottle\n"
		"  decisions), pwthrottle's forced writebacks (PWT_THR, PWT_MS)\n"
		"  and the stock balance_dirty_pages() sleeps (BDP_PAUS, BDP_MS)\n"
		"  --once SECS  one report over SECS seconds, then exit\n"
		"  --json       JSON, one task per line\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "once", required_argument, NULL, 'o' },
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct snap then = { 0 }, now = { 0 }, tmp;
	double once = 0, t_then, t_now, secs;
	bool json = false, pwt, tty = isatty(1);
	long page = sysconf(_SC_PAGESIZE);
	struct row *rows = NULL;
	struct pwtop *skel;
	struct vmstat vm;
	const char *tfs;
	char path[512], *end;
	size_t i, j, n;
	int opt, err, fd;

	while ((opt = getopt_long(argc, argv, "o:jvh", opts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			once = strtod(optarg, &end);
			if (*end || !(once > 0)) {
				fprintf(stderr, "pwtop: --once wants seconds > 0\n");
				return 2;
			}
			break;
		case 'j':
			json = true;
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}

	libbpf_set_print(libbpf_print);
	tfs = tracefs();
	if (!tfs) {
		fprintf(stderr, "pwtop: no tracefs (mount -t tracefs none /sys/kernel/tracing)\n");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/events/pwthrottle/pwt_decision", tfs);
	pwt = access(path, F_OK) == 0;

	skel = pwtop__open();
	if (!skel) {
		fprintf(stderr, "pwtop: cannot open the BPF object: %s\n",
			strerror(errno));
		return 1;
	}
	if (!read_layout(tfs, (struct pwtop_layout *)&skel->rodata->layout, pwt))
		goto fail;
	if (!pwt) {
		bpf_program__set_autoload(skel->progs.pwt_decision, false);
		bpf_program__set_autoload(skel->progs.pwt_throttle, false);
	}
	err = pwtop__load(skel);
	if (err) {
		fprintf(stderr, "pwtop: cannot load the BPF programs: %s (root? CONFIG_BPF_EVENTS?)\n",
			strerror(-err));
		goto fail;
	}
	err = pwtop__attach(skel);
	if (err) {
		fprintf(stderr, "pwtop: cannot attach to the tracepoints: %s\n",
			strerror(-err));
		goto fail;
	}
	if (!pwt)
		fprintf(stderr, "pwtop: pwthrottle is not loaded: stock throttling only\n");

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	fd = bpf_map__fd(skel->maps.tasks);
	t_then = now_s();
	while (!stop) {
		nap(once ? once : 1.0);
		t_now = now_s();
		secs = t_now - t_then;
		if (read_snap(fd, &now))
			goto fail;
		rows = realloc(rows, (now.n ? now.n : 1) * sizeof(*rows));
		if (!rows)
			goto fail;
		n = 0;
		for (i = 0, j = 0; i < now.n; i++) {
			while (j < then.n && then.t[j].pid < now.t[i].pid)
				j++;
			diff(&now.t[i],
			     j < then.n && then.t[j].pid == now.t[i].pid ?
				     &then.t[j] : NULL,
			     &rows[n].d);
			if (!active(&rows[n].d))
				continue;
			rows[n].rate = secs > 0 ?
				rows[n].d.dirtied * (double)page / secs : 0;
			n++;
		}
		qsort(rows, n, sizeof(*rows), by_activity);
		read_vmstat(&vm);
		if (json) {
			print_json(rows, n, secs, pwt, page, &vm);
		} else {
			if (tty && !once)
				printf("\033[H\033[2J");
			print_table(rows, n, once ? n : TOP_ROWS, secs, pwt,
				    page, &vm);
			if (!once)
				putchar('\n');
		}
		fflush(stdout);
		if (once)
			break;
		tmp = then;
		then = now;
		now = tmp;
		t_then = t_now;
	}
	pwtop__destroy(skel);
	return 0;
fail:
	pwtop__destroy(skel);
	return 1;
}
