/*
 * bench_base.c - this build against an older one (`TB_BENCH_BASE=path
 * make bench`, path the older tree's build/bench): the core, sim, trace
 * and sweep sections of both binaries run as children, alternately (this
 * build, the base, this build, ...), ROUNDS times each.  Every row both
 * print is paired run by run, and the median of the ratios this build /
 * the base (throughput: above 1 is faster) is printed with the goal of
 * issue 42: the defaults at least as fast as before (>= 1.00).
 *
 * A child's figures are its own best of several runs; pairing them keeps
 * the ratio meaningful while the shared machine's speed drifts.  Rows
 * are matched by name, so a base that lacks a row (a policy added since)
 * just has none.  Costs about ROUNDS x 2 x 15 s.
 */
#define _DEFAULT_SOURCE /* popen, readlink */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#define ROUNDS 5
#define ROWS 48
#define NAME 64

struct brow {
    char name[NAME];
    double v[2][ROUNDS]; /* [0] this build, [1] the base */
    int n[2];
};

/* Reads a figure from one line of a bench's output, as a throughput: a
 * core row ("  name  X M events/s", the playout engine's "X M
 * chunks/s"), the sim line, a trace row ("  load
 * ...  S s": 1/S), or a sweep row ("  policy  T thread(s)  S s  X M
 * event-simulations/s"). */
static int parse(const char *line, char *name, size_t cap, double *v)
{
    char a[32], w[16];
    unsigned t;
    double s;
    const char *p;
    if (strncmp(line, "sim:", 4) == 0 && (p = strrchr(line, ':')) != NULL &&
        sscanf(p + 1, " %lf M events/s", v) == 1) {
        snprintf(name, cap, "sim (ring, sentence)");
        return 1;
    }
    /* the label's words are one space apart: the figure follows the first
     * run of spaces after it */
    if (strncmp(line, "  load", 6) == 0 && (p = strstr(line + 2, "  ")) != NULL &&
        sscanf(p, " %lf s", &s) == 1 && s > 0.0) {
        snprintf(name, cap, "trace %s", strstr(line, "simulate") ? "load + simulate" : "load");
        *v = 1.0 / s;
        return 1;
    }
    if (sscanf(line, " %31s %u %15s %lf s %lf M event-sim", a, &t, w, &s, v) == 5 &&
        strncmp(w, "thread", 6) == 0) {
        snprintf(name, cap, "sweep %s %u thread%s", a, t, t == 1 ? "" : "s");
        return 1;
    }
    if (strstr(line, " M chunks/s") != NULL && sscanf(line, " %31s %lf M chunks/s", a, v) == 2) {
        snprintf(name, cap, "core %s (engine alone)", a);
        return 1;
    }
    if (strstr(line, " M events/s") != NULL && sscanf(line, " %31s %lf M events/s", a, v) == 2) {
        snprintf(name, cap, "core %s", a);
        return 1;
    }
    return 0;
}

static struct brow *row(struct brow *rows, size_t *n, const char *name)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(rows[i].name, name) == 0)
            return &rows[i];
    if (*n == ROWS)
        return NULL;
    memset(&rows[*n], 0, sizeof(rows[*n]));
    snprintf(rows[*n].name, sizeof(rows[*n].name), "%s", name);
    return &rows[(*n)++];
}

/* One child run of bin's core, sim, trace and sweep sections; its figures into
 * column which. */
static void run(const char *bin, int which, struct brow *rows, size_t *n)
{
    char cmd[4200], line[512], name[NAME];
    double v;
    FILE *p;
    snprintf(cmd, sizeof(cmd), "TB_BENCH_ONLY=core,sim,trace,sweep exec nice -n 10 '%s'", bin);
    p = popen(cmd, "r");
    if (p == NULL)
        bench_die("base: popen", bin);
    while (fgets(line, sizeof(line), p) != NULL) {
        struct brow *r;
        if (!parse(line, name, sizeof(name), &v) || (r = row(rows, n, name)) == NULL ||
            r->n[which] == ROUNDS)
            continue;
        r->v[which][r->n[which]++] = v;
    }
    if (pclose(p) != 0)
        bench_die("base: a bench run failed", bin);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

void bench_base(void)
{
    const char *base = getenv("TB_BENCH_BASE");
    static struct brow rows[ROWS];
    char self[4096];
    size_t n = 0;
    ssize_t len;
    if (base == NULL || *base == '\0') {
        printf("base: (set TB_BENCH_BASE to an older build's bench, e.g. 8250ad0's, to judge the\n"
               "      defaults' goal: this build >= 1.00x its throughput on every core, sim,\n"
               "      trace and sweep row)\n");
        return;
    }
    len = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (len <= 0 || strchr(base, '\'') != NULL)
        bench_die("base", "cannot name this bench or the base (a quote in its path?)");
    self[len] = '\0';
    printf("base: this build / %s, core, sim, trace and sweep run alternately %d times,\n"
           "      median of the paired ratios of throughput (goal >= 1.00: the defaults "
           "as fast as before)\n",
           base, ROUNDS);
    for (int i = 0; i < ROUNDS; i++) {
        run(self, 0, rows, &n);
        run(base, 1, rows, &n);
    }
    for (size_t i = 0; i < n; i++) {
        struct brow *r = &rows[i];
        double ratio[ROUNDS], med;
        int k = r->n[0] < r->n[1] ? r->n[0] : r->n[1];
        if (k == 0)
            continue;
        for (int j = 0; j < k; j++)
            ratio[j] = r->v[0][j] / r->v[1][j];
        med = median(ratio, k); /* sorts ratio: the spread is its ends */
        printf("  %-26s %5.3fx  (pairs %5.3f-%5.3f)   (goal >= 1.00: %s)\n", r->name, med, ratio[0],
               ratio[k - 1], med >= 1.0 ? "met" : "NOT met");
    }
}
