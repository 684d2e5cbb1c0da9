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

#include <cJSON.h>

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
    {"require", O_REQUIRE, "G=V",
     "a gate, as in ttsbuf bench (repeatable; default success_share=1: every request must "
     "have succeeded)",
     NULL},
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
    "0 merged, every gate held; 1 a gate failed (the default success_share=1 among them); 2 "
    "bad usage, a bad file, a shard missing or twice, or shards that ran different levels, "
    "model or options (the message names the field).",
    NULL,
    NULL,
};

/* The levels as the table names them: "c=1,c=5". */
static void levels_text(char *buf, size_t len, const struct tb_bench_meta *m)
{
    size_t k = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < m->nlevels && k + 1 < len; i++) {
        char name[64];
        tb_bench_level_name(&m->levels[i], name, sizeof(name));
        k += (size_t)snprintf(buf + k, len - k, "%s%s", i > 0 ? "," : "", name);
    }
}

/* The first option whose value differs ("wpm 150, not 200"), or "" when
 * none does. */
static void option_differs(char *buf, size_t len, const char *a, const char *b)
{
    cJSON *oa = cJSON_Parse(a), *ob = cJSON_Parse(b), *x;
    buf[0] = '\0';
    cJSON_ArrayForEach(x, oa)
    {
        cJSON *y = cJSON_GetObjectItemCaseSensitive(ob, x->string);
        char *ta = cJSON_PrintUnformatted(x), *tb = y != NULL ? cJSON_PrintUnformatted(y) : NULL;
        int differ = tb == NULL || ta == NULL || strcmp(ta, tb) != 0;
        if (differ)
            snprintf(buf, len, "option %s: %s here, %s there", x->string, tb ? tb : "(none)",
                     ta ? ta : "?");
        cJSON_free(ta);
        cJSON_free(tb);
        if (differ)
            break;
    }
    cJSON_ArrayForEach(x, ob)
    {
        if (buf[0] == '\0' && cJSON_GetObjectItemCaseSensitive(oa, x->string) == NULL)
            snprintf(buf, len, "option %s: here only", x->string);
    }
    if (buf[0] == '\0' && strcmp(a, b) != 0)
        snprintf(buf, len, "options: %s here, %s there", b, a);
    cJSON_Delete(oa);
    cJSON_Delete(ob);
}

/* Whether b ran what a ran (shard count, levels, model, options); when
 * not, why names the first field that differs, b's value and then a's. */
static int same_run(const struct tb_bench_meta *a, const struct tb_bench_meta *b, char *why,
                    size_t len)
{
    char la[1024], lb[1024];
    if (a->nshards != b->nshards) {
        snprintf(why, len, "the shard count: %u here, %u there", b->nshards, a->nshards);
        return 0;
    }
    levels_text(la, sizeof(la), a);
    levels_text(lb, sizeof(lb), b);
    if (a->nlevels != b->nlevels || strcmp(la, lb) != 0) {
        snprintf(why, len, "the levels: %.400s here, %.400s there", lb, la);
        return 0;
    }
    for (uint32_t i = 0; i < a->nlevels; i++)
        if (a->levels[i].rate != b->levels[i].rate) { /* beyond the name's digits */
            char name[64];
            tb_bench_level_name(&a->levels[i], name, sizeof(name));
            snprintf(why, len, "the rate of the level %s: %.17g here, %.17g there", name,
                     b->levels[i].rate, a->levels[i].rate);
            return 0;
        }
    if (strcmp(a->model, b->model) != 0) {
        snprintf(why, len, "the model: %s here, %s there", b->model, a->model);
        return 0;
    }
    option_differs(why, len, a->options, b->options);
    return why[0] == '\0';
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
    char **files = NULL, err[512], why[1200];
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
    tb_gates_default(a.gates, &a.ngates);
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
        } else if (!same_run(&meta, &m, why, sizeof(why))) {
            tb_cli_error("merge: %s is not of the run of %s: %s", files[i], files[0], why);
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
    tb_bench_report_warnings(&recs, 0);
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
        tb_bench_report_human(stdout, "merge", &meta, sums, a.gates, a.ngates);
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
