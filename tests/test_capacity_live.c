/*
 * test_capacity_live.c - the capacity group's live cases (test_capacity.c):
 * bench --tts-capacity against ttsbuf serve's TTS with a constant
 * latency (10 calls over 2 slots, on one loop thread and on two), and
 * bench --llm-capacity against serve's answers, each recorded wait held
 * to a FCFS model of the recorded entries and ends within the loop's
 * measured lag.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"

/* ------------------------------------------------ bench, live */

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static double stat(const cJSON *pt, const char *key, const char *field)
{
    return num(cJSON_GetObjectItemCaseSensitive(pt, key), field);
}

/* A chunk of the live run: joined the queue at q, waited w (recorded),
 * was sent at s and ended at e, all on the level's clock. */
struct lchunk {
    double q, w, s, e;
};

static int by_q(const void *a, const void *b)
{
    const struct lchunk *x = a, *y = b;
    return (x->q > y->q) - (x->q < y->q);
}

#define LMAX 4096
#define IDMAX 100000

/* The chunks of a bench --out directory: each trace's tts lines with a
 * capacity_wait, put on the level's clock by its record's t_start. */
static size_t live_chunks(const char *dir, struct lchunk *v, int *cap_seen)
{
    char path[1200];
    cJSON **recs = calloc(512, sizeof(cJSON *));
    double *t0 = calloc(IDMAX, sizeof(double)); /* ids: call x 1000 + turn */
    size_t nr, n = 0;
    char *text, *save = NULL;
    double start = NAN;
    assert_non_null(recs);
    assert_non_null(t0);
    snprintf(path, sizeof(path), "%s/records.jsonl", dir);
    nr = tb_test_jsonl_records(path, recs, 512);
    for (size_t i = 0; i < nr; i++) {
        double id = num(recs[i], "id");
        if (!isnan(id)) { /* a record (the file's other lines have no id) */
            assert_true(id >= 0 && id < IDMAX);
            t0[(size_t)id] = num(recs[i], "t_start");
        }
        cJSON_Delete(recs[i]);
    }
    snprintf(path, sizeof(path), "%s/traces/calls=10.jsonl", dir);
    text = tb_test_slurp_text(path, NULL);
    for (char *line = strtok_r(text, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        cJSON *o = cJSON_Parse(line);
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "tts");
        if (o != NULL && cJSON_GetObjectItemCaseSensitive(o, "request") != NULL) {
            double id = num(o, "request");
            assert_true(id >= 0 && id < IDMAX);
            start = t0[(size_t)id];
            if (t != NULL && num(t, "capacity") == 2)
                *cap_seen = 1;
        } else if (t != NULL && !isnan(num(t, "capacity_wait"))) {
            assert_true(n < LMAX);
            v[n].q = start + num(t, "capacity_ready");
            v[n].w = num(t, "capacity_wait");
            v[n].s = start + num(t, "sent");
            v[n].e = start + num(t, "end");
            n++;
        }
        cJSON_Delete(o);
    }
    free(text);
    free(recs);
    free(t0);
    return n;
}

/*
 * The done-criterion: 10 calls, capacity 2, against serve's TTS with a
 * constant 0.2 s latency.  The model here is fed what the run recorded
 * (each chunk's entry to the queue and the end of its synthesis, when
 * its slot freed) and serves the entries in order on 2 slots; each
 * recorded wait must equal its wait to within the loop's lag: the
 * largest delay between a grant and its send (the loop's reaction), twice
 * (an end is stamped when its bytes arrive, and the slot given back when
 * the loop handles it), plus 2 ms for the clocks read a few instructions
 * apart.  Never more than 2 in flight; the waits are not trivial.
 */
static void ten_calls(const char *extra)
{
    char dir[256], args[1024];
    struct lchunk *v = calloc(LMAX, sizeof(*v));
    double slot[2] = {-INFINITY, -INFINITY}, lag = 0, worst = 0, maxw = 0;
    size_t n;
    int port, cap_seen = 0;
    struct tb_test_out o;
    assert_non_null(v);
    tb_test_tmpdir(dir, sizeof(dir), "capacity", "live");
    tb_test_serve_up("--synth tps=40,ttft=0.05,tokens=60,jitter=0 --tts-latency 0.2", &port);
    snprintf(args, sizeof(args),
             "bench --base-url http://127.0.0.1:%d/v1 --model m --tts-url http://127.0.0.1:%d "
             "--conversations builtin --calls 10 --turns 2 --tts-capacity 2 --out %s/out -q %s",
             port, port, dir, extra);
    o = tb_test_run(args);
    tb_test_serve_down(NULL);
    if (o.code != 0)
        fail_msg("bench exited %d: %s", o.code, o.se);
    tb_test_out_free(&o);
    snprintf(args, sizeof(args), "%s/out", dir);
    n = live_chunks(args, v, &cap_seen);
    assert_true(cap_seen);
    assert_true(n >= 40);
    qsort(v, n, sizeof(*v), by_q);
    for (size_t i = 0; i < n; i++) {
        assert_true(v[i].w >= 0 && v[i].s >= v[i].q + v[i].w - 1e-6 && v[i].e >= v[i].s);
        if (v[i].s - (v[i].q + v[i].w) > lag)
            lag = v[i].s - (v[i].q + v[i].w);
        if (v[i].w > maxw)
            maxw = v[i].w;
    }
    for (size_t i = 0; i < n; i++) {
        int k = slot[0] <= slot[1] ? 0 : 1;
        double g = v[i].q > slot[k] ? v[i].q : slot[k], w = g - v[i].q;
        slot[k] = v[i].e;
        if (fabs(w - v[i].w) > worst)
            worst = fabs(w - v[i].w);
        if (fabs(w - v[i].w) > 2 * lag + 0.002)
            fail_msg("chunk %zu of %zu (entered %.6f): waited %.6f s, the model says %.6f s "
                     "(tolerance %.6f s)",
                     i + 1, n, v[i].q, v[i].w, w, 2 * lag + 0.002);
    }
    /* at most 2 in flight from send to end, at every send */
    for (size_t i = 0; i < n; i++) {
        int fly = 0;
        for (size_t j = 0; j < n; j++)
            fly += v[j].s <= v[i].s + 1e-9 && v[j].e > v[i].s + 1e-6;
        assert_true(fly <= 2);
    }
    assert_true(maxw > 0.1); /* the capacity did bind */
    print_message(
        "capacity live%s: %zu chunks, max wait %.3f s, model within %.6f s (lag %.6f s)\n", extra,
        n, maxw, worst, lag);
    free(v);
    tb_test_rm_rf(dir);
}

void tb_test_capacity_ten_calls(void **state)
{
    (void)state;
    ten_calls("");
}

/* The same on two loop threads (each with five calls): one queue for
 * both, the same model on the level's one clock. */
void tb_test_capacity_ten_calls_threads(void **state)
{
    (void)state;
    ten_calls(" --threads 2");
}

/*
 * bench --llm-capacity 2 with 6 streams at once against answers of about
 * 1.05 s: each record's wait against a FCFS model of 2 slots fed with
 * the records' starts (the request due, its clock running) and ends (its
 * slot freed); within 2 ms plus twice the loop's lag, measured as the
 * largest excess of a record's ttft over its wait and the first-token
 * time of the answers that did not wait.  Never more than 2 streaming.
 */
struct lreq {
    double due, wait, end;
};

static int by_due(const void *a, const void *b)
{
    const struct lreq *x = a, *y = b;
    return (x->due > y->due) - (x->due < y->due);
}

void tb_test_capacity_llm(void **state)
{
    char dir[256], args[1024], path[1300];
    cJSON *recs[64];
    struct lreq v[64];
    double slot[2] = {-INFINITY, -INFINITY}, ttft0 = INFINITY, lag = 0, maxw = 0;
    size_t nr, n = 0;
    int port;
    struct tb_test_out o;
    (void)state;
    tb_test_tmpdir(dir, sizeof(dir), "capacity", "llm");
    tb_test_serve_up("--synth tps=20,ttft=0.1,tokens=20,jitter=0", &port);
    snprintf(args, sizeof(args),
             "bench --base-url http://127.0.0.1:%d/v1 --model m -c 6 --requests 12 "
             "--llm-capacity 2 --out %s/out -q",
             port, dir);
    o = tb_test_run(args);
    tb_test_serve_down(NULL);
    if (o.code != 0)
        fail_msg("bench exited %d: %s", o.code, o.se);
    tb_test_out_free(&o);
    snprintf(path, sizeof(path), "%s/out/records.jsonl", dir);
    nr = tb_test_jsonl_records(path, recs, 64);
    for (size_t i = 0; i < nr; i++) {
        if (!isnan(num(recs[i], "id"))) {
            v[n].due = num(recs[i], "t_start");
            v[n].wait = num(recs[i], "llm_capacity_wait_s");
            v[n].end = num(recs[i], "t_end");
            assert_true(v[n].wait >= 0);
            if (v[n].wait == 0 && num(recs[i], "ttft_s") < ttft0)
                ttft0 = num(recs[i], "ttft_s");
            if (num(recs[i], "ttft_s") - v[n].wait > lag)
                lag = num(recs[i], "ttft_s") - v[n].wait;
            n++;
        }
        cJSON_Delete(recs[i]);
    }
    assert_int_equal(n, 12);
    lag -= ttft0; /* beyond the answer's own first token */
    qsort(v, n, sizeof(*v), by_due);
    for (size_t i = 0; i < n; i++) {
        int k = slot[0] <= slot[1] ? 0 : 1;
        double g = v[i].due > slot[k] ? v[i].due : slot[k];
        slot[k] = v[i].end;
        if (fabs(g - v[i].due - v[i].wait) > 2 * lag + 0.002)
            fail_msg("request %zu (due %.6f): waited %.6f s, the model says %.6f s (tolerance "
                     "%.6f s)",
                     i + 1, v[i].due, v[i].wait, g - v[i].due, 2 * lag + 0.002);
        if (v[i].wait > maxw)
            maxw = v[i].wait;
    }
    for (size_t i = 0; i < n; i++) {
        int fly = 0;
        for (size_t j = 0; j < n; j++)
            fly += v[j].due + v[j].wait <= v[i].due + v[i].wait + 1e-9 &&
                   v[j].end > v[i].due + v[i].wait + 1e-6;
        assert_true(fly <= 2);
    }
    assert_true(maxw > 1.0);
    {
        /* the level's summary: every record's wait a sample */
        char *text;
        cJSON *sum, *lv;
        snprintf(path, sizeof(path), "%s/out/summary.json", dir);
        text = tb_test_slurp_text(path, NULL);
        sum = cJSON_Parse(text);
        free(text);
        lv = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(sum, "levels"), 0);
        assert_true(stat(lv, "llm_capacity_wait_s", "count") == 12);
        if (fabs(stat(lv, "llm_capacity_wait_s", "max") - maxw) > 1e-9)
            fail_msg("summary max %.17g, records' max %.17g",
                     stat(lv, "llm_capacity_wait_s", "max"), maxw);
        cJSON_Delete(sum);
    }
    print_message("llm capacity live: %zu requests, max wait %.3f s, lag %.6f s\n", n, maxw, lag);
    tb_test_rm_rf(dir);
}
