/*
 * cmd_merge.c - `ttsbuf merge`: shards' records files (from `ttsbuf bench
 * --shard I/N --out DIR`) into the summary one run over all of their
 * requests gives: the summary is computed from the per-request records,
 * never from the shards' percentiles.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench_cli.h"
#include "bench_report.h"
#include "cli.h"
#include "common.h"
#include "optdoc.h"
#include "ttsbuf/bench.h"
#include "ttsbuf/error.h"

#define MERGE_FILES_MAX 100000

enum { O_JSON = 300, O_CSV, O_REQUIRE };

static const struct tb_optdoc merge_rows[] = {
    {"json", O_JSON, NULL, "one JSON object (as bench --json)", NULL},
    {"csv", O_CSV, NULL, "one CSV row per level", NULL},
    {"require", O_REQUIRE, "G=V", "a gate, as in ttsbuf bench (repeatable)", NULL},
    TB_OPTDOC_END,
};

static const struct tb_optsec merge_secs[] = {
    {NULL, merge_rows},
    {NULL, tb_opt_help},
    {NULL, NULL},
};

const struct tb_cmddoc tb_doc_merge = {
    "merge",
    "[OPTIONS] RECORDS...",
    "Combine the per-request records of `ttsbuf bench` shards (records*.jsonl\n"
    "files, or --out directories holding them) into the summary one run over\n"
    "all their requests would give (exactly: percentiles are recomputed from\n"
    "the records).  Every shard 0..N-1 must be there once, with the same levels\n"
    "and playout options.\n\n",
    merge_secs,
    "0 merged; 1 a gate failed; 2 bad usage, a bad file, a shard missing or twice, or shards "
    "that ran different levels or options.",
    NULL,
    NULL,
};

/* Same run: levels and options. */
static int same_run(const struct tb_bench_meta *a, const struct tb_bench_meta *b)
{
    if (a->nshards != b->nshards || a->nlevels != b->nlevels ||
        strcmp(a->options, b->options) != 0 || strcmp(a->model, b->model) != 0)
        return 0;
    for (uint32_t i = 0; i < a->nlevels; i++)
        if (a->levels[i].mode != b->levels[i].mode ||
            a->levels[i].concurrency != b->levels[i].concurrency ||
            a->levels[i].rate != b->levels[i].rate)
            return 0;
    return 1;
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Appends a copy of dir/name (or name alone).  0 or -1 (printed). */
static int push_file(char ***files, size_t *n, size_t *cap, const char *dir, const char *name)
{
    size_t len = (dir != NULL ? strlen(dir) + 1 : 0) + strlen(name) + 1;
    char *full;
    if (*n == *cap) {
        char **nv;
        if (*cap >= MERGE_FILES_MAX) {
            tb_cli_error("merge: more than %d files", MERGE_FILES_MAX);
            return -1;
        }
        nv = realloc(*files, (*cap ? *cap * 2 : 16) * sizeof(char *));
        if (nv == NULL) {
            tb_cli_error("out of memory");
            return -1;
        }
        *files = nv;
        *cap = *cap ? *cap * 2 : 16;
    }
    full = malloc(len);
    if (full == NULL) {
        tb_cli_error("out of memory");
        return -1;
    }
    if (dir != NULL)
        snprintf(full, len, "%s/%s", dir, name);
    else
        snprintf(full, len, "%s", name);
    (*files)[(*n)++] = full;
    return 0;
}

/* Adds path, or the records*.jsonl files in it when it is a directory
 * (sorted).  0 or -1 (printed). */
static int add_path(const char *p, char ***files, size_t *n, size_t *cap)
{
    struct stat st;
    struct dirent *de;
    DIR *d;
    size_t first = *n;
    if (stat(p, &st) != 0 || (S_ISDIR(st.st_mode) && (d = opendir(p)) == NULL)) {
        tb_cli_error("merge: %s: %s", p, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        return push_file(files, n, cap, NULL, p);
    while ((de = readdir(d)) != NULL) {
        size_t nl = strlen(de->d_name);
        if (strncmp(de->d_name, "records", 7) != 0 || nl < 13 ||
            strcmp(de->d_name + nl - 6, ".jsonl") != 0)
            continue;
        if (push_file(files, n, cap, p, de->d_name) != 0) {
            closedir(d);
            return -1;
        }
    }
    closedir(d);
    if (*n == first) {
        tb_cli_error("merge: %s holds no records*.jsonl", p);
        return -1;
    }
    qsort(*files + first, *n - first, sizeof(char *), cmp_str);
    return 0;
}

static int cmp_id(const void *x, const void *y)
{
    const struct tb_bench_rec *a = x, *b = y;
    if (a->level != b->level)
        return a->level < b->level ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

struct merge_args {
    struct tb_gate gates[TB_GATES_MAX];
    size_t ngates;
    int json, csv;
};

static int option(void *ud, int c, const char *arg)
{
    struct merge_args *a = ud;
    switch (c) {
    case O_JSON: a->json = 1; return 1;
    case O_CSV: a->csv = 1; return 1;
    case O_REQUIRE: return tb_cli_gate_option(a->gates, &a->ngates, arg);
    default: return 0;
    }
}

int tb_cmd_merge(int argc, char **argv)
{
    struct merge_args a;
    struct tb_bench_meta meta, m;
    struct tb_bench_recs recs;
    struct tb_bench_summary *sums = NULL;
    char **files = NULL, err[512];
    unsigned char *seen = NULL;
    size_t nfiles = 0, cap = 0;
    int first, code;

    memset(&a, 0, sizeof(a));
    code = tb_cli_parse(argc, argv, &tb_doc_merge, option, &a, &first);
    if (code >= 0)
        return code;
    if (first == argc) {
        tb_cli_error("merge: give the records files or directories (see ttsbuf merge --help)");
        return TB_EXIT_USAGE;
    }
    code = TB_EXIT_USAGE;
    tb_bench_recs_init(&recs);
    memset(&meta, 0, sizeof(meta));
    for (int i = first; i < argc; i++)
        if (add_path(argv[i], &files, &nfiles, &cap) != 0)
            goto out;
    for (size_t i = 0; i < nfiles; i++) {
        if (tb_bench_read(files[i], &m, &recs, err, sizeof(err)) != 0) {
            tb_cli_error("%s", err);
            goto out;
        }
        if (i == 0) {
            meta = m;
            seen = calloc(m.nshards, 1);
            if (seen == NULL) {
                tb_cli_error("out of memory");
                goto out;
            }
        } else if (!same_run(&meta, &m)) {
            tb_cli_error("merge: %s ran other levels, options, model or shard count than %s",
                         files[i], files[0]);
            goto out;
        }
        if (seen[m.shard]++) {
            tb_cli_error("merge: %s: shard %u of %u given twice", files[i], m.shard, m.nshards);
            goto out;
        }
    }
    for (uint32_t s = 0; s < meta.nshards; s++) {
        if (!seen[s]) {
            tb_cli_error("merge: shard %u of %u is missing", s, meta.nshards);
            goto out;
        }
    }
    /* A request twice means the same shard's records were given twice
     * under different names. */
    if (recs.n > 1) /* qsort on no records would be handed a NULL array */
        qsort(recs.v, recs.n, sizeof(recs.v[0]), cmp_id);
    for (size_t i = 1; i < recs.n; i++) {
        if (recs.v[i].level == recs.v[i - 1].level && recs.v[i].id == recs.v[i - 1].id) {
            tb_cli_error("merge: request %llu of level %u appears twice",
                         (unsigned long long)recs.v[i].id, recs.v[i].level);
            goto out;
        }
    }
    tb_bench_report_warnings(&recs);
    meta.shard = 0;
    meta.nshards = 1;
    sums = calloc(meta.nlevels > 0 ? meta.nlevels : 1, sizeof(*sums));
    if (sums == NULL || tb_bench_summaries(&meta, &recs, sums) != 0)
        goto out;
    if (a.csv)
        tb_bench_report_csv(stdout, &meta, sums);
    else if (a.json)
        tb_bench_report_json(stdout, "merge", &meta, sums);
    else
        tb_bench_report_human(stdout, &meta, sums);
    code = tb_gates_check(a.gates, a.ngates, &meta, sums) > 0 ? TB_EXIT_GATE : TB_EXIT_OK;
out:
    for (size_t i = 0; i < nfiles; i++)
        free(files[i]);
    free(files);
    free(seen);
    free(sums);
    tb_bench_recs_free(&recs);
    return code;
}
