/*
 * fuzz_bench_rec.c - the bench records reader (bench.h:
 * tb_bench_read_stream) and the summary computed from what it read.
 *
 * Properties: the reader returns 0 or one of its documented errors, with
 * a "NAME:LINE: reason" (or "NAME: reason") message on one line; what it
 * accepts is in range (the shard below the shard count and within
 * TB_BENCH_SHARDS_MAX, every record's level one of the header's, times
 * and gaps in 0..TB_TIME_MAX, no metric negative); every level's summary
 * computes; and it round-trips: what tb_bench_write_header /
 * tb_bench_write_rec print reads back to the same header and records, bit
 * for bit.
 */
#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "ttsbuf/bench.h"
#include "ttsbuf/error.h"

static void same_num(double a, double b)
{
    FUZZ_CHECK((isnan(a) && isnan(b)) || (a == b && signbit(a) == signbit(b)));
}

static void same_rec(const struct tb_bench_rec *a, const struct tb_bench_rec *b)
{
    FUZZ_CHECK(a->level == b->level && a->id == b->id && a->prompt == b->prompt);
    FUZZ_CHECK(a->http_status == b->http_status && a->error == b->error);
    FUZZ_CHECK(a->events == b->events && a->content_tokens == b->content_tokens);
    FUZZ_CHECK(a->usage_tokens == b->usage_tokens && a->underruns == b->underruns);
    FUZZ_CHECK(a->error == 0 || strcmp(a->message, b->message) == 0);
    same_num(a->t_sched, b->t_sched);
    same_num(a->t_start, b->t_start);
    same_num(a->t_end, b->t_end);
    same_num(a->ttft, b->ttft);
    same_num(a->ttfa, b->ttfa);
    same_num(a->decode_tps, b->decode_tps);
    same_num(a->decode_tps_usage, b->decode_tps_usage);
    same_num(a->gap_total, b->gap_total);
    same_num(a->gap_max, b->gap_max);
    same_num(a->min_tps, b->min_tps);
    same_num(a->speedup, b->speedup);
    FUZZ_CHECK(a->nitl == b->nitl);
    for (size_t i = 0; i < a->nitl; i++)
        same_num(a->itl[i], b->itl[i]);
}

static void round_trip(const struct tb_bench_meta *m, const struct tb_bench_recs *r)
{
    struct tb_bench_meta m2;
    struct tb_bench_recs r2;
    char *buf = NULL, err[512];
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    int rc;
    FUZZ_CHECK(f != NULL);
    FUZZ_CHECK(tb_bench_write_header(f, m) == 0);
    for (size_t i = 0; i < r->n; i++)
        FUZZ_CHECK(tb_bench_write_rec(f, m, &r->v[i], NULL) == 0);
    FUZZ_CHECK(fclose(f) == 0);
    f = fmemopen(buf, len, "rb");
    FUZZ_CHECK(f != NULL);
    tb_bench_recs_init(&r2);
    rc = tb_bench_read_stream(f, "back", &m2, &r2, err, sizeof(err));
    if (rc != 0)
        fprintf(stderr, "reload: %s\n", err);
    FUZZ_CHECK(rc == 0);
    fclose(f);
    FUZZ_CHECK(m2.shard == m->shard && m2.nshards == m->nshards && m2.nlevels == m->nlevels);
    FUZZ_CHECK(strcmp(m2.options, m->options) == 0 && strcmp(m2.model, m->model) == 0);
    FUZZ_CHECK(tb_bench_slo_equal(&m2.slo, &m->slo));
    for (uint32_t i = 0; i < m->nlevels; i++) {
        FUZZ_CHECK(m2.levels[i].mode == m->levels[i].mode);
        FUZZ_CHECK(m2.levels[i].concurrency == m->levels[i].concurrency);
        same_num(m2.levels[i].rate, m->levels[i].rate);
    }
    FUZZ_CHECK(r2.n == r->n);
    for (size_t i = 0; i < r->n; i++)
        same_rec(&r->v[i], &r2.v[i]);
    tb_bench_recs_free(&r2);
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tb_bench_meta m;
    struct tb_bench_recs r;
    char err[512];
    int rc;
    /* fmemopen refuses an empty buffer: read an empty file instead. */
    FILE *f = size > 0 ? fmemopen((void *)data, size, "rb") : fopen("/dev/null", "rb");
    FUZZ_CHECK(f != NULL);
    tb_bench_recs_init(&r);
    err[0] = '\0';
    rc = tb_bench_read_stream(f, "f", &m, &r, err, sizeof(err));
    fclose(f);
    FUZZ_CHECK(rc == 0 || rc == TB_EFORMAT || rc == TB_ETOOBIG || rc == TB_EEMPTY);
    if (rc != 0) {
        FUZZ_CHECK(strncmp(err, "f:", 2) == 0);
        fuzz_safe_line(err, sizeof(err));
        tb_bench_recs_free(&r);
        return 0;
    }
    FUZZ_CHECK(m.nshards >= 1 && m.nshards <= TB_BENCH_SHARDS_MAX && m.shard < m.nshards);
    FUZZ_CHECK(m.nlevels <= TB_BENCH_LEVELS_MAX);
    for (size_t i = 0; i < r.n; i++) {
        const struct tb_bench_rec *x = &r.v[i];
        FUZZ_CHECK(x->level < m.nlevels);
        FUZZ_CHECK(x->t_sched >= 0 && x->t_sched <= TB_TIME_MAX && x->t_start >= 0 &&
                   x->t_start <= TB_TIME_MAX && x->t_end >= 0 && x->t_end <= TB_TIME_MAX);
        FUZZ_CHECK(!(x->ttft < 0) && !(x->ttfa < 0) && !(x->gap_max < 0) && !(x->min_tps < 0));
        FUZZ_CHECK(x->error >= 0 && x->error < TB_READER__COUNT);
        for (size_t k = 0; k < x->nitl; k++)
            FUZZ_CHECK(x->itl[k] >= 0 && x->itl[k] <= TB_TIME_MAX);
    }
    for (uint32_t l = 0; l < m.nlevels; l++) {
        struct tb_bench_summary s;
        FUZZ_CHECK(tb_bench_summarize_slo(&r, l, &m.slo, &s) == 0);
        FUZZ_CHECK(s.ok <= s.requests && s.good <= s.ok);
        tb_bench_summary_free(&s);
    }
    round_trip(&m, &r);
    tb_bench_recs_free(&r);
    return 0;
}
