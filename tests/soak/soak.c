/*
 * soak.c - `make soak`: the mock provider under the concurrency goal for a
 * long time, watched for slow leaks and lost events.
 *
 * SOAK_STREAMS (default 1000) chat streams run at once from one libcurl
 * multi thread against `tb_serve` in a child process (tests/bench/
 * bench_mock.c); each stream is SOAK_TOKENS (250) one-token events at 50
 * tokens/s (5 s), and as soon as one ends the next starts, for
 * SOAK_SECONDS (default 600) in all.  Every SOAK_SAMPLE seconds (5) it
 * samples the resident memory and open descriptors of both processes.
 *
 * Checked, for every stream: HTTP 200, a clean end with [DONE], each
 * delta the one that was due (text and order: a lost or duplicated event
 * breaks the sequence), and the server-sent count (its usage chunk's
 * completion_tokens) equal to the client-received count and to the
 * stream's length.  Over the run: descriptors do not grow (the first
 * sample, before any stream, against the last, after the last), and memory is
 * flat: the last sample within 10% (and 4 MiB) of the first steady one
 * (the sample after one third of the run, when every buffer has reached
 * its working size).  Exit 0 when all hold, 1 otherwise (with the reason).
 * SIGINT or SIGTERM ends the run early and still reports.
 */
#include <curl/curl.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "../bench/bench.h"
#include "ttsbuf.h"

#define TPS 50.0
#define FD_MARGIN 64

struct sample {
    double t;
    long c_rss, s_rss; /* KiB */
    long c_fds, s_fds;
    uint64_t streams, events;
};

struct slot {
    CURL *h;
    struct tb_sse *sse;
    const struct tb_stream *s;
    struct tb_api_parser *parser;
    size_t k;               /* content deltas received, in order */
    long long usage;        /* the server's completion_tokens, or -1 */
    int done_seen, bad, in; /* [DONE]; a wrong delta or parse error; in flight */
};

struct totals {
    uint64_t streams, ok, events, lost, wrong, usage_mismatch;
    char first_bad[256];
};

static volatile sig_atomic_t stop_now;

static void on_signal(int sig)
{
    (void)sig;
    stop_now = 1;
}

static long env_long(const char *name, long def, long lo, long hi)
{
    const char *v = getenv(name);
    char *end;
    long x;
    if (v == NULL || *v == '\0')
        return def;
    x = strtol(v, &end, 10);
    if (*end != '\0' || x < lo || x > hi) {
        fprintf(stderr, "soak: %s=%s is not a whole number in %ld..%ld\n", name, v, lo, hi);
        exit(2);
    }
    return x;
}

/* Resident set of a process, KiB (/proc/PID/statm). */
static long rss_kib(pid_t pid)
{
    char path[64], line[256], *p, *end;
    long res;
    FILE *f;
    snprintf(path, sizeof(path), "/proc/%d/statm", (int)pid);
    f = fopen(path, "r");
    if (f == NULL)
        return -1;
    p = fgets(line, sizeof(line), f);
    fclose(f);
    if (p == NULL)
        return -1;
    strtol(line, &end, 10); /* size, then resident, in pages */
    res = strtol(end, &p, 10);
    return p == end ? -1 : res * (sysconf(_SC_PAGESIZE) / 1024);
}

/* Open descriptors of a process (/proc/PID/fd, less the DIR's own). */
static long fds(pid_t pid)
{
    char path[64];
    DIR *d;
    struct dirent *e;
    long n = 0;
    snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
    d = opendir(path);
    if (d == NULL)
        return -1;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n - (pid == getpid()); /* opendir's own descriptor */
}

static int on_event(void *ud, const struct tb_sse_event *ev)
{
    struct slot *x = ud;
    struct tb_api_delta d;
    char err[160];
    if (tb_api_parse_event(x->parser, NULL, 0, ev->data, ev->data_len, &d, err, sizeof(err)) != 0) {
        x->bad = 1;
        return 1;
    }
    if (d.done) {
        x->done_seen = 1;
        return 0;
    }
    if (d.usage_completion >= 0)
        x->usage = d.usage_completion;
    if (d.content == NULL)
        return 0; /* the role chunk, the finish chunk, usage */
    if (x->k >= x->s->n || d.content_len != x->s->ev[x->k].len ||
        memcmp(d.content, tb_stream_text(x->s, x->k), d.content_len) != 0) {
        x->bad = 1; /* extra, duplicated, or not the delta that was due */
        return 1;
    }
    x->k++;
    return 0;
}

static size_t on_write(char *buf, size_t size, size_t nmemb, void *ud)
{
    struct slot *x = ud;
    char err[160];
    if (tb_sse_feed(x->sse, buf, size * nmemb, on_event, x, err, sizeof(err)) != 0) {
        x->bad = 1;
        return 0;
    }
    return size * nmemb;
}

static void slot_start(CURLM *m, struct slot *x, const char *url, struct curl_slist *hdr)
{
    static const char body[] = "{\"model\":\"ttsbuf-mock\",\"stream\":true,"
                               "\"stream_options\":{\"include_usage\":true},"
                               "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    if (x->h == NULL) {
        x->h = curl_easy_init();
        if (x->h == NULL || tb_sse_create(0, 0, &x->sse) != 0)
            bench_die("soak", "out of memory");
        curl_easy_setopt(x->h, CURLOPT_URL, url);
        curl_easy_setopt(x->h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
        curl_easy_setopt(x->h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(x->h, CURLOPT_HTTPHEADER, hdr);
        curl_easy_setopt(x->h, CURLOPT_WRITEFUNCTION, on_write);
        curl_easy_setopt(x->h, CURLOPT_WRITEDATA, x);
        curl_easy_setopt(x->h, CURLOPT_PRIVATE, x);
        curl_easy_setopt(x->h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(x->h, CURLOPT_CONNECTTIMEOUT, 10L);
        curl_easy_setopt(x->h, CURLOPT_TIMEOUT, 60L); /* a stuck stream still ends */
    }
    tb_sse_reset(x->sse);
    x->k = 0;
    x->usage = -1;
    x->done_seen = x->bad = 0;
    x->in = 1;
    if (curl_multi_add_handle(m, x->h) != CURLM_OK)
        bench_die("soak", "curl_multi_add_handle failed");
}

/* A finished stream: counted, checked, its handle ready for the next. */
static void slot_end(CURLM *m, struct slot *x, CURLcode result, struct totals *t)
{
    long status = 0;
    int ok;
    curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &status);
    curl_multi_remove_handle(m, x->h);
    x->in = 0;
    t->streams++;
    t->events += x->k;
    ok = result == CURLE_OK && status == 200 && x->done_seen && !x->bad &&
         tb_sse_pending(x->sse) == 0 && x->k == x->s->n && x->usage == (long long)x->k;
    if (ok) {
        t->ok++;
        return;
    }
    t->lost += x->k < x->s->n ? x->s->n - x->k : 0;
    t->wrong += x->bad;
    t->usage_mismatch += x->usage != (long long)x->k;
    if (t->first_bad[0] == '\0')
        snprintf(t->first_bad, sizeof(t->first_bad),
                 "stream %llu: curl %d (%s), HTTP %ld, %zu of %zu deltas, server sent %lld, "
                 "[DONE] %s%s",
                 (unsigned long long)t->streams, (int)result, curl_easy_strerror(result), status,
                 x->k, x->s->n, x->usage, x->done_seen ? "seen" : "missing",
                 x->bad ? ", a wrong delta" : "");
}

static void take_sample(struct sample *sm, double t, pid_t server, const struct totals *tt)
{
    sm->t = t;
    sm->c_rss = rss_kib(getpid());
    sm->s_rss = rss_kib(server);
    sm->c_fds = fds(getpid());
    sm->s_fds = fds(server);
    sm->streams = tt->streams;
    sm->events = tt->events;
}

static void print_sample(const struct sample *sm)
{
    printf("  %6.0f %10ld %10ld %8ld %8ld %9llu %11llu\n", sm->t, sm->c_rss, sm->s_rss, sm->c_fds,
           sm->s_fds, (unsigned long long)sm->streams, (unsigned long long)sm->events);
}

/* Memory is flat when the end is within 10% and 4 MiB of the steady start. */
static int grew(long first, long last)
{
    return last > first + first / 10 && last > first + 4096;
}

int main(void)
{
    long seconds = env_long("SOAK_SECONDS", 600, 1, 86400);
    long n = env_long("SOAK_STREAMS", 1000, 1, 100000);
    long tokens = env_long("SOAK_TOKENS", 250, 1, 100000);
    long every = env_long("SOAK_SAMPLE", 5, 1, 3600);
    struct tb_stream s;
    struct bench_mock mock;
    struct bench_mock_result sr;
    struct curl_slist *hdr;
    struct slot *slots;
    struct sample *sm;
    struct totals tt;
    struct tb_api_parser *parser;
    struct rlimit rl;
    size_t nsm = 0, cap = (size_t)(seconds / every) + 4, steady;
    CURLM *m;
    char url[80];
    double t0, next_sample;
    int running = 0, fail = 0;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)(n + FD_MARGIN)) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur < (rlim_t)(n + FD_MARGIN))
            bench_die("soak", "RLIMIT_NOFILE is below SOAK_STREAMS + 64");
    }
    tb_stream_init(&s);
    bench_synth(TPS, 1.0 / TPS, (uint32_t)tokens, &s);
    bench_mock_start(&s, &mock); /* first: the child inherits no libcurl state */
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        bench_die("soak", "curl_global_init failed");
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    m = curl_multi_init();
    hdr = curl_slist_append(NULL, "Content-Type: application/json");
    slots = calloc((size_t)n, sizeof(*slots));
    sm = calloc(cap, sizeof(*sm));
    if (m == NULL || hdr == NULL || slots == NULL || sm == NULL ||
        tb_api_parser_create(TB_API_CHAT, &parser) != 0) {
        bench_die("soak", "out of memory");
        return 1; /* not reached; cppcheck does not know bench_die never returns */
    }
    memset(&tt, 0, sizeof(tt));
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/chat/completions", mock.port);
    printf("soak: %ld concurrent chat streams of %ld events at %.0f tokens/s (%.1f s each), "
           "each replaced as it ends, for %ld s;\n  the mock provider in its own process, "
           "one libcurl multi client.  Every %ld s:\n",
           n, tokens, TPS, s.ev[s.n - 1].t, seconds, every);
    printf("  %6s %10s %10s %8s %8s %9s %11s\n", "t, s", "client KiB", "server KiB", "cli fds",
           "srv fds", "streams", "events");
    fflush(stdout);

    t0 = bench_now();
    /* The baseline: no stream in flight, as at the end. */
    take_sample(&sm[nsm++], 0, mock.pid, &tt);
    print_sample(&sm[0]);
    next_sample = t0 + (double)every;
    for (long i = 0; i < n; i++) {
        slots[i].s = &s;
        slots[i].parser = parser;
        slot_start(m, &slots[i], url, hdr);
    }
    for (;;) {
        CURLMsg *msg;
        int q;
        double now = bench_now();
        int ending = stop_now || now - t0 >= (double)seconds;
        if (curl_multi_perform(m, &running) != CURLM_OK)
            bench_die("soak", "curl_multi_perform failed");
        while ((msg = curl_multi_info_read(m, &q)) != NULL) {
            struct slot *x;
            if (msg->msg != CURLMSG_DONE)
                continue;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
            slot_end(m, x, msg->data.result, &tt);
            if (!ending)
                slot_start(m, x, url, hdr);
        }
        if (now >= next_sample && nsm < cap) {
            take_sample(&sm[nsm], now - t0, mock.pid, &tt);
            if (nsm % (size_t)(30 / every > 0 ? 30 / every : 1) == 0 || seconds <= 60)
                print_sample(&sm[nsm]);
            fflush(stdout);
            nsm++;
            next_sample += (double)every;
        }
        if (ending && running == 0)
            break;
        if (curl_multi_poll(m, NULL, 0, 200, NULL) != CURLM_OK)
            bench_die("soak", "curl_multi_poll failed");
    }
    {
        /* The server closes a connection when it sees the client's EOF,
         * a moment after the client is done: give it up to 5 s to settle
         * before the last sample, which the first one is compared with. */
        double settle = bench_now();
        while (fds(mock.pid) > sm[0].s_fds && bench_now() - settle < 5) {
            struct timespec ts = {0, 20000000};
            nanosleep(&ts, NULL);
        }
    }
    take_sample(&sm[nsm < cap ? nsm : cap - 1], bench_now() - t0, mock.pid, &tt);
    if (nsm < cap)
        nsm++;
    print_sample(&sm[nsm - 1]);
    bench_mock_stop(&mock, &sr);

    steady = nsm / 3;
    {
        long c_max = 0, s_max = 0;
        for (size_t i = steady; i < nsm; i++) {
            c_max = sm[i].c_rss > c_max ? sm[i].c_rss : c_max;
            s_max = sm[i].s_rss > s_max ? sm[i].s_rss : s_max;
        }
        printf("\n  streams %llu (%llu clean), deltas received %llu, server sent %llu events "
               "in %llu requests, %llu connections dropped\n",
               (unsigned long long)tt.streams, (unsigned long long)tt.ok,
               (unsigned long long)tt.events, (unsigned long long)sr.st.events,
               (unsigned long long)sr.st.requests, (unsigned long long)sr.st.dropped);
        printf("  lost %llu, wrong or duplicated %llu, server-sent != received %llu\n",
               (unsigned long long)tt.lost, (unsigned long long)tt.wrong,
               (unsigned long long)tt.usage_mismatch);
        printf("  client RSS %ld KiB at %.0f s, %ld KiB at the end (max %ld); "
               "fds %ld -> %ld\n",
               sm[steady].c_rss, sm[steady].t, sm[nsm - 1].c_rss, c_max, sm[steady].c_fds,
               sm[nsm - 1].c_fds);
        printf("  server RSS %ld KiB at %.0f s, %ld KiB at the end (max %ld); "
               "fds %ld -> %ld; lateness P50 %.2f ms, P99 %.2f ms, max %.2f ms\n",
               sm[steady].s_rss, sm[steady].t, sm[nsm - 1].s_rss, s_max, sm[steady].s_fds,
               sm[nsm - 1].s_fds, sr.st.late_p50 * 1e3, sr.st.late_p99 * 1e3, sr.st.late_max * 1e3);
        if (tt.ok != tt.streams || tt.streams == 0 || sr.st.events != tt.events) {
            printf("  FAIL: events lost or wrong (%s)\n",
                   tt.first_bad[0] ? tt.first_bad : "server and client counts differ");
            fail = 1;
        }
        /* Descriptors: the last sample is taken with no stream in flight. */
        if (sm[nsm - 1].c_fds > sm[0].c_fds + 8 || sm[nsm - 1].s_fds > sm[0].s_fds + 8) {
            printf("  FAIL: descriptors grew (client %ld -> %ld, server %ld -> %ld)\n", sm[0].c_fds,
                   sm[nsm - 1].c_fds, sm[0].s_fds, sm[nsm - 1].s_fds);
            fail = 1;
        }
        if (grew(sm[steady].c_rss, sm[nsm - 1].c_rss) ||
            grew(sm[steady].s_rss, sm[nsm - 1].s_rss)) {
            printf("  FAIL: memory grew after the steady start\n");
            fail = 1;
        }
        printf("  soak: %s\n", fail ? "FAILED"
                                    : "flat memory, no lost or duplicated event, "
                                      "no descriptor growth");
    }
    for (long i = 0; i < n; i++) {
        curl_easy_cleanup(slots[i].h);
        tb_sse_destroy(slots[i].sse);
    }
    curl_multi_cleanup(m);
    curl_slist_free_all(hdr);
    curl_global_cleanup();
    tb_api_parser_destroy(parser);
    tb_stream_free(&s);
    free(slots);
    free(sm);
    return fail;
}
