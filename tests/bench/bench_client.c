/*
 * bench_client.c - the client's own accuracy and cost: `ttsbuf bench`'s
 * event loop (tb_bench_run) against the article's concurrent benchmark
 * method written with the official openai npm SDK (tests/node/
 * bench-article.mjs), both streaming from the same mock provider at the
 * same concurrency levels, one wave of N requests per level (the
 * article's method: N at once, gathered).
 *
 * The mock (its own process, a fresh one per row) streams a synthetic
 * stream with an exact schedule: STREAM_TOKENS events of one token at
 * STREAM_TPS, no jitter, cut at MAX_TOKENS by max_tokens.  For every
 * stream, every content event k gives one error sample: how much later
 * than the schedule it was recorded, against the stream's own best event
 *     e_k = (a_k - t_k) - min over j of (a_j - t_j)
 * (the request's send time and trip are one unknown offset per stream; no
 * event arrives before its schedule, so the smallest difference is the
 * best estimate of that offset; a late first event does not shift the
 * rest).  It holds the server's own lateness (its P99 is printed beside)
 * plus the client's.
 * The TTFT error is the recorded time to first token minus the schedule's
 * t_0: the request's trip, the server's read and the client's delay.
 * Lost = events the schedule sent that the client did not record.  CPU
 * per event: the client process's CPU time over the level (ttsbuf:
 * getrusage around tb_bench_run, the playout of every stream included;
 * Node: process.cpuUsage around the level's Promise.all) over the events
 * it recorded.
 *
 * The floors (bench_floor.c) put those costs beside what reading each
 * event costs at all at that level: bare recv() on epoll, and a bare
 * libcurl multi_socket loop; SDK / libcurl floor is the most any libcurl
 * client could reach against the SDK.  TB_BENCH_CLIENT_N=1,1000 runs some
 * levels only.
 *
 * Node is skipped (and said so) when node or tests/node/node_modules is
 * missing.  One run per row: percentiles over many events already.
 */
#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "ttsbuf.h"
#include "ttsbuf/bench.h"

#define STREAM_TPS 50.0
#define STREAM_TTFT 0.2
#define STREAM_TOKENS 250
#define MAX_TOKENS 200
#define GOAL_N 1000
#define GOAL_P99 0.002

static const size_t levels[] = {1, 10, 50, 100, 1000};
#define NLEVELS (sizeof(levels) / sizeof(levels[0]))

/* TB_BENCH_CLIENT_N=1,1000 runs only those levels (all by default). */
static int level_on(size_t l)
{
    return bench_level_on("TB_BENCH_CLIENT_N", levels[l]);
}

struct row {
    int ran;
    size_t n, ok;
    struct bench_count c;
    double err_p50, err_p99, ttft_p50, ttft_p99, cpu_us_per_event, srv_p50, srv_p99;
    double sys_us_per_event;  /* the kernel's part of cpu_us_per_event */
    double play_us_per_event; /* ttsbuf: the playout's share, measured apart */
};

static void finish_row(struct bench_samples *err, struct bench_samples *ttft, double cpu_s,
                       double sys_s, struct row *r)
{
    struct tb_stats se, st;
    r->ran = 1;
    tb_stats_of(err->v, err->n, &se); /* sorts the samples, about to be reset */
    tb_stats_of(ttft->v, ttft->n, &st);
    r->err_p50 = se.p50;
    r->err_p99 = se.p99;
    r->ttft_p50 = st.p50;
    r->ttft_p99 = st.p99;
    r->cpu_us_per_event = r->c.received > 0 ? cpu_s * 1e6 / (double)r->c.received : 0;
    r->sys_us_per_event = r->c.received > 0 ? sys_s * 1e6 / (double)r->c.received : 0;
    err->n = ttft->n = 0;
}

static void run_ttsbuf(const struct tb_stream *sched, size_t n, struct bench_samples *err,
                       struct bench_samples *ttft, struct row *r)
{
    struct bench_mock mock;
    struct bench_mock_result mr;
    struct tb_bench_opts o;
    struct tb_bench_prompts p;
    struct tb_bench_recs recs;
    char url[96], e[256];
    double c0, c1, s0, s1, play, *a = malloc(sched->n * sizeof(double));

    bench_mock_start(sched, &mock);
    if (a == NULL || tb_bench_prompts_builtin(&p) != 0)
        bench_die("client", "out of memory");
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/chat/completions", mock.port);
    memset(&o, 0, sizeof(o));
    o.http.url = url;
    o.http.bearer = "sk-bench-client-0123456789abcdefghijklmnopqrs"; /* as a real run's */
    o.http.idle_timeout = 30;
    tb_api_request_init(&o.req);
    o.req.model = "ttsbuf-mock";
    o.req.max_tokens = MAX_TOKENS;
    o.prompts = &p;
    o.level.mode = TB_BENCH_CLOSED;
    o.level.concurrency = (uint32_t)n;
    o.requests = n;
    o.nshards = 1;
    tb_sim_opts_default(&o.sim);
    tb_bench_recs_init(&recs);
    c0 = bench_cpu(RUSAGE_SELF, &s0);
    if (tb_bench_run(&o, 0, &recs, e, sizeof(e)) != 0)
        bench_die("client: tb_bench_run", e);
    c1 = bench_cpu(RUSAGE_SELF, &s1);
    bench_mock_stop(&mock, &mr);
    /* The playout ran inside tb_bench_run; run it again to take its share
     * out of the loop's figure. */
    {
        double p0 = bench_cpu(RUSAGE_SELF, NULL), p1;
        for (size_t i = 0; i < recs.n; i++)
            if (tb_bench_analyze(&recs.v[i], &o.sim, e, sizeof(e)) != 0)
                bench_die("client: tb_bench_analyze", e);
        p1 = bench_cpu(RUSAGE_SELF, NULL);
        c1 -= p1 - p0;
        play = p1 - p0;
    }
    memset(r, 0, sizeof(*r));
    r->n = n;
    for (size_t i = 0; i < recs.n; i++) {
        size_t k = bench_arrivals(recs.v[i].stream, a, sched->n);
        r->ok += recs.v[i].error == 0;
        bench_score(sched, MAX_TOKENS, a, k, err, ttft, &r->c);
    }
    r->srv_p50 = mr.st.late_p50;
    r->srv_p99 = mr.st.late_p99;
    finish_row(err, ttft, c1 - c0, s1 - s0, r);
    r->play_us_per_event = r->c.received > 0 ? play * 1e6 / (double)r->c.received : 0;
    tb_bench_recs_free(&recs);
    tb_bench_prompts_free(&p);
    free(a);
}

/* The floors at every level: a fresh mock for each, as for the clients. */
struct floor {
    int ran;
    double recv_us, recv_sys_us, curl_us, curl_sys_us;
};

static void run_floors(const struct tb_stream *sched, struct floor *fl)
{
    for (size_t l = 0; l < NLEVELS; l++) {
        struct bench_mock mock;
        struct bench_mock_result mr;
        double ev = (double)levels[l] * MAX_TOKENS / 1e6, sys, cpu;
        if (!level_on(l))
            continue;
        bench_mock_start(sched, &mock);
        cpu = bench_floor_recv(mock.port, levels[l], MAX_TOKENS, &sys);
        bench_mock_stop(&mock, &mr);
        fl[l].recv_us = cpu / ev;
        fl[l].recv_sys_us = sys / ev;
        bench_mock_start(sched, &mock);
        cpu = bench_floor_curl(mock.port, levels[l], MAX_TOKENS, &sys);
        bench_mock_stop(&mock, &mr);
        fl[l].curl_us = cpu / ev;
        fl[l].curl_sys_us = sys / ev;
        fl[l].ran = 1;
    }
}

/* Reads the Node script's JSON lines for every level. */
static void run_node(const char *dir, const struct tb_stream *sched, struct bench_samples *err,
                     struct bench_samples *ttft, struct row *rows)
{
    for (size_t l = 0; l < NLEVELS; l++) {
        struct bench_mock mock;
        struct bench_mock_result mr;
        char cmd[1024], *line = NULL;
        size_t cap = 0;
        FILE *f;
        cJSON *root, *req;
        double *a;
        if (!level_on(l))
            continue;
        a = malloc(sched->n * sizeof(double));
        bench_mock_start(sched, &mock);
        snprintf(cmd, sizeof(cmd), "node '%s/bench-article.mjs' http://127.0.0.1:%d/v1 %zu %d", dir,
                 mock.port, levels[l], MAX_TOKENS);
        f = popen(cmd, "r");
        if (f == NULL || a == NULL)
            bench_die("client: node", strerror(errno));
        if (getline(&line, &cap, f) < 0) {
            pclose(f);
            bench_mock_stop(&mock, &mr);
            free(line);
            free(a);
            printf("  (node failed at N = %zu)\n", levels[l]);
            continue;
        }
        pclose(f);
        bench_mock_stop(&mock, &mr);
        root = cJSON_Parse(line);
        if (root == NULL)
            bench_die("client: node", "output is not JSON");
        memset(&rows[l], 0, sizeof(rows[l]));
        rows[l].n = levels[l];
        cJSON_ArrayForEach(req, cJSON_GetObjectItem(root, "requests"))
        {
            const cJSON *arr = cJSON_GetObjectItem(req, "arrivals_ms"), *v;
            double start = cJSON_GetObjectItem(req, "start_ms")->valuedouble;
            size_t k = 0;
            rows[l].ok += cJSON_IsNull(cJSON_GetObjectItem(req, "error"));
            cJSON_ArrayForEach(v, arr)
            {
                if (k < sched->n)
                    a[k++] = (v->valuedouble - start) / 1000.0;
            }
            bench_score(sched, MAX_TOKENS, a, k, err, ttft, &rows[l].c);
        }
        rows[l].srv_p50 = mr.st.late_p50;
        rows[l].srv_p99 = mr.st.late_p99;
        finish_row(err, ttft, cJSON_GetObjectItem(root, "cpu_us")->valuedouble / 1e6,
                   cJSON_GetNumberValue(cJSON_GetObjectItem(root, "sys_us")) / 1e6, &rows[l]);
        cJSON_Delete(root);
        free(line);
        free(a);
    }
}

static void print_row(const char *who, const struct row *r)
{
    if (!r->ran) {
        printf("  %-7s %5zu  (did not run)\n", who, r->n);
        return;
    }
    printf("  %-7s %5zu %5zu %7llu %5llu | %7.3f %7.3f | %7.3f %7.3f | %6.1f %5.1f %5.1f | %7.3f "
           "%7.3f\n",
           who, r->n, r->ok, (unsigned long long)r->c.received,
           (unsigned long long)(r->c.expected -
                                (r->c.received < r->c.expected ? r->c.received : r->c.expected)),
           r->err_p50 * 1e3, r->err_p99 * 1e3, r->ttft_p50 * 1e3, r->ttft_p99 * 1e3,
           r->cpu_us_per_event, r->sys_us_per_event, r->play_us_per_event, r->srv_p50 * 1e3,
           r->srv_p99 * 1e3);
}

static int node_ready(const char *dir)
{
    char path[1024];
    struct stat st;
    snprintf(path, sizeof(path), "%s/node_modules/openai/package.json", dir);
    return stat(path, &st) == 0 && system("node --version >/dev/null 2>&1") == 0;
}

void bench_client(void)
{
    struct tb_stream sched;
    struct bench_samples err = {NULL, 0, 0}, ttft = {NULL, 0, 0};
    struct row tt[NLEVELS], nd[NLEVELS];
    struct floor fl[NLEVELS];
    const char *dir = getenv("TB_NODEDIR") != NULL ? getenv("TB_NODEDIR") : "tests/node";
    int have_node = node_ready(dir);

    bench_nofile_max();
    tb_stream_init(&sched);
    bench_synth(STREAM_TPS, STREAM_TTFT, STREAM_TOKENS, &sched);
    memset(tt, 0, sizeof(tt));
    memset(nd, 0, sizeof(nd));
    memset(fl, 0, sizeof(fl));
    printf("client: ttsbuf bench's event loop vs the article's method with the openai npm SDK;\n"
           "  N streams at once, %d events each at %g tokens/s, from the mock (its own process);\n"
           "  error = recorded lateness against the schedule, ms, each stream aligned on its\n"
           "  earliest event (server lateness included; the server's own lateness in the\n"
           "  last columns); CPU us per recorded event (ttsbuf: the event loop; the playout of\n"
           "  every stream, which the SDK client does not do, in the play column)\n",
           MAX_TOKENS, STREAM_TPS);
    for (size_t l = 0; l < NLEVELS; l++)
        if (level_on(l))
            run_ttsbuf(&sched, levels[l], &err, &ttft, &tt[l]);
    run_floors(&sched, fl);
    if (have_node)
        run_node(dir, &sched, &err, &ttft, nd);
    else
        printf("  (node or %s/node_modules missing: the openai SDK rows are skipped)\n", dir);
    printf("  client      N    ok  events  lost | err P50     P99 | TTFT err P50  P99 |   CPU   "
           "sys  play "
           "| srv P50    P99\n");
    for (size_t l = 0; l < NLEVELS; l++) {
        print_row("ttsbuf", &tt[l]);
        if (have_node) {
            nd[l].n = levels[l];
            print_row("openai", &nd[l]);
        }
    }
    printf("  floors, CPU us per event (system part): bare recv() on epoll; a bare libcurl\n"
           "  multi_socket loop whose write callback only counts bytes (bench_floor.c)\n"
           "       N       recv          libcurl       ttsbuf\n");
    for (size_t l = 0; l < NLEVELS; l++)
        if (fl[l].ran && tt[l].ran)
            printf("   %5zu   %5.1f (%5.1f)   %5.1f (%5.1f)   %5.1f (%5.1f)\n", levels[l],
                   fl[l].recv_us, fl[l].recv_sys_us, fl[l].curl_us, fl[l].curl_sys_us,
                   tt[l].cpu_us_per_event, tt[l].sys_us_per_event);
    if (have_node) {
        printf("  ratios (openai SDK / ttsbuf; openai SDK / the libcurl floor, the most any\n"
               "  libcurl client could reach):\n"
               "       N   CPU/event   error P99   CPU/event vs floor\n");
        for (size_t l = 0; l < NLEVELS; l++) {
            if (!nd[l].ran || !tt[l].ran)
                continue;
            printf("   %5zu   %8.1fx   %8.1fx   %8.1fx\n", levels[l],
                   nd[l].cpu_us_per_event / tt[l].cpu_us_per_event,
                   tt[l].err_p99 > 0 ? nd[l].err_p99 / tt[l].err_p99 : 0,
                   fl[l].ran && fl[l].curl_us > 0 ? nd[l].cpu_us_per_event / fl[l].curl_us : 0);
        }
    }
    {
        const struct row *g = &tt[NLEVELS - 1];
        int met = g->n == GOAL_N && g->err_p99 <= GOAL_P99 && g->c.received == g->c.expected;
        printf("  goal (ttsbuf, %d streams at %g tokens/s: error P99 <= %g ms, none lost): %s\n",
               GOAL_N, STREAM_TPS, GOAL_P99 * 1e3, met ? "met" : "NOT met");
    }
    bench_samples_free(&err);
    bench_samples_free(&ttft);
    tb_stream_free(&sched);
}
