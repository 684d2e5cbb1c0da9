/*
 * bench_out.c - `ttsbuf bench --out DIR`: the directory (never mixing two
 * runs), the records file, a file of traces per level (a trace per
 * request, trace.h), and the summary (see bench_out.h).
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>

#include "bench_out.h"
#include "tool_opts.h"
#include "bench_report.h"
#include "cli.h"
#include "turn_opts.h"
#include "jsonout.h"
#include "outputs.h"
#include "ttsbuf/error.h"
#include "ttsbuf/trace.h"
#include "ttsbuf/version.h"

/* DIR/STEM.EXT, or DIR/STEM-I-of-N.EXT for a shard. */
static void file_name(char *out, size_t len, const char *dir, const char *stem, const char *ext,
                      const struct tb_bench_meta *m)
{
    if (m->nshards > 1)
        snprintf(out, len, "%s/%s-%u-of-%u.%s", dir, stem, m->shard, m->nshards, ext);
    else
        snprintf(out, len, "%s/%s.%s", dir, stem, ext);
}

enum out_entry { OUT_KEEP, OUT_EARLIER, OUT_FOREIGN };

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

void tb_cli_bench_level_stem(const struct tb_bench_level *l, char *out, size_t len)
{
    char name[64];
    size_t k = 0;
    tb_bench_level_name(l, name, sizeof(name));
    for (const char *p = name; *p != '\0' && k + 3 < len; p++) {
        if (p[0] == '/' && p[1] == 's') { /* "5/s": "5ps" */
            out[k++] = 'p';
        } else if (*p == '(' || *p == ',') {
            out[k++] = '-';
            p += p[1] == ' ';
        } else if (*p != ' ' && *p != ')') {
            out[k++] = *p;
        }
    }
    out[k] = '\0';
}

/* Whether name starts with a level's stem ("c=10", "calls=2",
 * "rate=5ps-poisson") or an earlier ttsbuf's "L<index>-", and ends in
 * ".jsonl". */
static int trace_name(const char *name)
{
    if (!has_suffix(name, ".jsonl"))
        return 0;
    if (name[0] == 'L' && name[1] >= '0' && name[1] <= '9')
        return strchr(name, '-') != NULL;
    return strncmp(name, "c=", 2) == 0 || strncmp(name, "calls=", 6) == 0 ||
           strncmp(name, "rate=", 5) == 0;
}

/* 1 and *id when name is an earlier ttsbuf's trace of one request:
 * "STEM-<id>.jsonl" (its stem as trace_name's). */
static int trace_id(const char *name, unsigned long long *id)
{
    char *end;
    const char *dash = strrchr(name, '-');
    if (!trace_name(name) || dash == NULL || !(dash[1] >= '0' && dash[1] <= '9'))
        return 0;
    errno = 0;
    *id = strtoull(dash + 1, &end, 10);
    return errno == 0 && end != dash + 1 && strcmp(end, ".jsonl") == 0;
}

/* Whether name is shard I of N's traces of a level: "STEM-I-of-N.jsonl". */
static int shard_traces(const char *name, const struct tb_bench_meta *m)
{
    char tail[48];
    snprintf(tail, sizeof(tail), "-%u-of-%u.jsonl", m->shard, m->nshards);
    return trace_name(name) && has_suffix(name, tail);
}

/* What an entry of DIR (or DIR/traces) is.  Unsharded: an earlier run's
 * records, summary and traces are OUT_EARLIER (refused; --force removes
 * them); any other file in traces/ is OUT_FOREIGN (refused, never
 * removed: `sweep DIR/traces` would read it); other files in DIR (a
 * report redirected there) stay.  Sharded (shards share a DIR), only this
 * shard's records, summary and traces (ids = shard mod N) matter. */
static enum out_entry out_entry(const char *name, int in_traces, const struct tb_bench_meta *m)
{
    char mine[64];
    unsigned long long id = 0;
    int trace = in_traces && trace_name(name);
    if (m->nshards > 1) {
        if (in_traces)
            return shard_traces(name, m) || (trace_id(name, &id) && id % m->nshards == m->shard)
                       ? OUT_EARLIER
                       : OUT_KEEP;
        snprintf(mine, sizeof(mine), "records-%u-of-%u.jsonl", m->shard, m->nshards);
        if (strcmp(name, mine) == 0)
            return OUT_EARLIER;
        snprintf(mine, sizeof(mine), "summary-%u-of-%u.json", m->shard, m->nshards);
        return strcmp(name, mine) == 0 ? OUT_EARLIER : OUT_KEEP;
    }
    if (in_traces)
        return trace ? OUT_EARLIER : OUT_FOREIGN;
    if ((strncmp(name, "records", 7) == 0 && has_suffix(name, ".jsonl")) ||
        (strncmp(name, "summary", 7) == 0 && has_suffix(name, ".json")))
        return OUT_EARLIER;
    return OUT_KEEP;
}

/* Refuses (or, with force, removes) an earlier run's files in dir (or in
 * dir/traces).  0 or TB_EINVAL (printed). */
static int clear_stale(const char *dir, int in_traces, const struct tb_bench_meta *m, int force)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[4200];
    int rc = 0;
    if (d == NULL) {
        tb_cli_error("--out: %s: %s", dir, strerror(errno));
        return TB_EINVAL;
    }
    while (rc == 0 && (e = readdir(d)) != NULL) {
        enum out_entry k;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        k = out_entry(e->d_name, in_traces, m);
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (k == OUT_KEEP)
            continue;
        if (k == OUT_FOREIGN) {
            tb_cli_error("--out: %s holds %s, not a trace of ttsbuf's; give a new directory", dir,
                         e->d_name);
            rc = TB_EINVAL;
        } else if (!force) {
            tb_cli_error("--out: %s holds an earlier run (%s); give a new directory, or "
                         "--force to remove its records, summary and traces",
                         dir, e->d_name);
            rc = TB_EINVAL;
        } else if (unlink(path) != 0) {
            tb_cli_error("--out: cannot remove %s: %s", path, strerror(errno));
            rc = TB_EINVAL;
        }
    }
    closedir(d);
    return rc;
}

int tb_cli_bench_meta_options(struct tb_bench_meta *meta, const struct tb_sim_opts *o,
                              const struct tb_cli_tts *tts, const struct tb_cli_turn *turn,
                              const struct tb_bench_retry *retry, size_t llm_capacity, const struct tb_cli_tool *tool,
                              long max_tokens, const char *api)
{
    cJSON *j = cJSON_CreateObject();
    char *t;
    if (j == NULL) {
        tb_cli_error("out of memory");
        return TB_ENOMEM;
    }
    tb_cli_json_playout(j, o);
    tb_cli_json_tts(j, tts);
    tb_cli_turn_json_opts(j, turn);
    tb_cli_tool_json_opts(j, tool);
    if (retry->kind != TB_BENCH_RETRY_NONE) {
        cJSON *r = cJSON_AddObjectToObject(j, "retry");
        cJSON_AddStringToObject(r, "policy", retry->kind == TB_BENCH_RETRY_EXP ? "exp" : "after");
        if (retry->kind == TB_BENCH_RETRY_EXP) {
            cJSON_AddNumberToObject(r, "base_s", retry->base);
            cJSON_AddNumberToObject(r, "max_s", retry->max);
        }
        cJSON_AddNumberToObject(r, "max_retries",
                                retry->max_retries > 0 ? retry->max_retries
                                                       : TB_BENCH_RETRY_MAX_DEFAULT);
    }
    if (llm_capacity > 0) /* only with it: other runs' options as before */
        cJSON_AddNumberToObject(j, "llm_capacity", (double)llm_capacity);
    cJSON_AddNumberToObject(j, "ring_slots", (double)o->ring_slots);
    cJSON_AddNumberToObject(j, "ring_bytes", (double)o->ring_bytes);
    cJSON_AddNumberToObject(j, "max_tokens", (double)max_tokens);
    cJSON_AddStringToObject(j, "api", api);
    t = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    if (t != NULL && strlen(t) >= sizeof(meta->options)) {
        cJSON_free(t);
        tb_cli_error("bench: the playout options take more than %zu bytes of JSON (a long "
                     "--tts-latency FILE path?)",
                     sizeof(meta->options) - 1);
        return TB_EINVAL;
    }
    if (t == NULL) {
        tb_cli_error("out of memory");
        return TB_ENOMEM;
    }
    snprintf(meta->options, sizeof(meta->options), "%s", t);
    cJSON_free(t);
    snprintf(meta->started_at, sizeof(meta->started_at), "%s", tb_cli_started_at());
    snprintf(meta->ttsbuf_version, sizeof(meta->ttsbuf_version), "%s", tb_version());
    return 0;
}

/* The output directory: DIR and DIR/traces, with no earlier run's files
 * in them (refused, or removed with --force): a later `sweep DIR/traces`
 * must not mix runs.  0 or TB_EINVAL (printed). */
static int make_out(const char *dir, const struct tb_bench_meta *m, int force)
{
    char path[4096];
    int rc;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        tb_cli_error("--out: %s: %s", dir, strerror(errno));
        return TB_EINVAL;
    }
    snprintf(path, sizeof(path), "%s/traces", dir);
    if (mkdir(path, 0777) != 0 && errno != EEXIST) {
        tb_cli_error("--out: %s: %s", path, strerror(errno));
        return TB_EINVAL;
    }
    rc = clear_stale(path, 1, m, force);
    return rc != 0 ? rc : clear_stale(dir, 0, m, force);
}

int tb_cli_bench_out_open(const char *dir, const struct tb_bench_meta *m, int force, FILE **rf)
{
    char path[4200];
    int rc = make_out(dir, m, force);
    *rf = NULL;
    if (rc != 0)
        return rc;
    file_name(path, sizeof(path), dir, "records", "jsonl", m);
    *rf = tb_cli_output_open("--out", path, &rc);
    if (*rf == NULL)
        return rc;
    /* The header is on disk before the first request: while the run goes
     * on (or after it is killed) the file is a records file, not empty. */
    if (tb_bench_write_header(*rf, m) != 0 || fflush(*rf) != 0) {
        tb_cli_error("--out: writing %s failed: %s", path, strerror(errno));
        return TB_EIO;
    }
    return 0;
}

int tb_cli_bench_traces_close(struct tb_cli_bench_traces *t, int trc)
{
    int rc = 0;
    if (t->tf != NULL)
        rc = tb_cli_out_close("--out", t->path, t->tf, trc);
    t->tf = NULL;
    return rc;
}

int tb_cli_bench_out_rec(FILE *rf, struct tb_cli_bench_traces *t, const char *dir,
                         const struct tb_bench_meta *m, struct tb_bench_rec *r)
{
    struct tb_stream *s = r->stream;
    int rc = 0, trc;
    if (t->tf == NULL || r->level != t->level) {
        /* A level's traces, one after another, in one file (trace.h). */
        char stem[64], sub[100];
        if ((rc = tb_cli_bench_traces_close(t, 0)) != 0)
            return rc;
        t->level = r->level;
        tb_cli_bench_level_stem(&m->levels[r->level], stem, sizeof(stem));
        snprintf(sub, sizeof(sub), "%s/traces", dir);
        file_name(t->path, sizeof(t->path), sub, stem, "jsonl", m);
        snprintf(t->rel, sizeof(t->rel), "traces/%s", t->path + strlen(sub) + 1);
        t->tf = tb_cli_output_open("--out", t->path, &rc);
        if (t->tf == NULL)
            return rc;
    }
    snprintf(s->model, sizeof(s->model), "%s", m->model);
    snprintf(s->base_url, sizeof(s->base_url), "%s", m->base_url);
    snprintf(s->provider, sizeof(s->provider), "%s", m->provider);
    snprintf(s->started_at, sizeof(s->started_at), "%s", m->started_at);
    snprintf(s->command, sizeof(s->command), "bench");
    s->request = (long long)r->id;
    trc = tb_trace_write_opts(t->tf, s, m->options);
    if (trc != 0)
        return tb_cli_bench_traces_close(t, trc);
    rc = tb_bench_write_rec(rf, m, r, t->rel);
    if (rc != 0) {
        tb_cli_error("--out: write error on the records file: %s",
                     rc == TB_EIO ? strerror(errno) : tb_strerror(rc));
        return rc == TB_ENOMEM ? rc : TB_EIO;
    }
    return 0;
}

int tb_cli_bench_out_level(FILE *rf, const char *dir, const struct tb_bench_meta *m,
                           struct tb_bench_recs *recs, size_t from)
{
    struct tb_cli_bench_traces t = {NULL, 0, "", ""};
    int rc = 0, crc;
    for (size_t i = from; i < recs->n && rc == 0; i++)
        rc = tb_cli_bench_out_rec(rf, &t, dir, m, &recs->v[i]);
    crc = tb_cli_bench_traces_close(&t, 0);
    fflush(rf);
    return rc != 0 ? rc : crc;
}

int tb_cli_bench_out_summary(const char *dir, const struct tb_bench_meta *m,
                             const struct tb_bench_summary *sums)
{
    char path[4200];
    FILE *sf;
    int rc;
    file_name(path, sizeof(path), dir, "summary", "json", m);
    sf = tb_cli_output_open("--out", path, &rc);
    if (sf == NULL)
        return rc;
    return tb_cli_out_close("--out", path, sf, tb_cli_bench_report_json(sf, "bench", m, sums));
}
