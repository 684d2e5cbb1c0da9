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

#include "bench_opts.h"
#include "bench_report.h"
#include "cli.h"
#include "outputs.h"
#include "optdoc.h"
#include "options.h"
#include "ttsbuf/bench.h"
#include "ttsbuf/error.h"

#define MERGE_FILES_MAX 100000

enum { O_JSON = 300, O_CSV, O_REQUIRE };

static const struct tb_optdoc merge_rows[] = {
    {"json", O_JSON, NULL, "one JSON object (as bench --json)", NULL},
    {"csv", O_CSV, NULL, "one CSV row per level", NULL},
    {"require", O_REQUIRE, "G=V",
     "a gate, as in ttsbuf bench (repeatable; default success_share=1: every request must "
     "have succeeded; goodput and goodput_per_s with records that carry SLOs)",
     NULL},
    TB_OPTDOC_END,
};

static const struct tb_optsec merge_secs[] = {
    {NULL, merge_rows},
    {NULL, tb_opt_help},
    {NULL, NULL},
};

static int cmd_merge(int argc, char **argv);

const struct tb_cmddoc tb_doc_merge = {
    "merge",
    "[OPTIONS] RECORDS...",
    "Combine the per-request records of `ttsbuf bench` shards (records*.jsonl\n"
    "files, or --out directories holding them) into the summary one run over\n"
    "all their requests would give (exactly: percentiles are recomputed from\n"
    "the records).  Every shard 0..N-1 must be there once, with the same levels\n"
    "and playout options and SLOs (bench --slo: merge takes them from the\n"
    "records and recomputes each level's goodput; it has no --slo of its own).\n\n",
    merge_secs,
    "0 merged, every gate held; 1 a gate failed (the default success_share=1 among them); 2 "
    "bad usage, a bad file, a shard missing or twice, or shards that ran different levels, "
    "model, options or SLOs (the message names the field); 3 the run failed (out of memory, a "
    "write "
    "that failed).",
    NULL,
    NULL,
    cmd_merge,
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
    if (strcmp(a->conversations, b->conversations) != 0) {
        snprintf(why, len, "the conversations: %.300s here, %.300s there",
                 b->conversations[0] ? b->conversations : "none (requests)",
                 a->conversations[0] ? a->conversations : "none (requests)");
        return 0;
    }
    if (!tb_bench_slo_equal(&a->slo, &b->slo)) {
        char sa[400], sb[400];
        tb_bench_slo_text(&a->slo, sa, sizeof(sa));
        tb_bench_slo_text(&b->slo, sb, sizeof(sb));
        snprintf(why, len, "the SLOs (bench --slo): %s here, %s there", sb, sa);
        return 0;
    }
    option_differs(why, len, a->options, b->options);
    return why[0] == '\0';
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Appends a copy of dir/name (or name alone).  0 or an error (printed). */
static int push_file(char ***files, size_t *n, size_t *cap, const char *dir, const char *name)
{
    size_t len = (dir != NULL ? strlen(dir) + 1 : 0) + strlen(name) + 1;
    char *full;
    if (*n == *cap) {
        char **nv;
        if (*cap >= MERGE_FILES_MAX) {
            tb_cli_error("merge: more than %d files", MERGE_FILES_MAX);
            return TB_EINVAL;
        }
        nv = realloc(*files, (*cap ? *cap * 2 : 16) * sizeof(char *));
        if (nv == NULL) {
            tb_cli_error("out of memory");
            return TB_ENOMEM;
        }
        *files = nv;
        *cap = *cap ? *cap * 2 : 16;
    }
    full = malloc(len);
    if (full == NULL) {
        tb_cli_error("out of memory");
        return TB_ENOMEM;
    }
    if (dir != NULL)
        snprintf(full, len, "%s/%s", dir, name);
    else
        snprintf(full, len, "%s", name);
    (*files)[(*n)++] = full;
    return 0;
}

/* Adds path, or the records*.jsonl files in it when it is a directory
 * (sorted).  0 or an error (printed). */
static int add_path(const char *p, char ***files, size_t *n, size_t *cap)
{
    struct stat st;
    struct dirent *de;
    DIR *d;
    size_t first = *n;
    if (stat(p, &st) != 0 || (S_ISDIR(st.st_mode) && (d = opendir(p)) == NULL)) {
        tb_cli_error("merge: %s: %s", p, strerror(errno));
        return TB_EINVAL;
    }
    if (!S_ISDIR(st.st_mode))
        return push_file(files, n, cap, NULL, p);
    while ((de = readdir(d)) != NULL) {
        size_t nl = strlen(de->d_name);
        if (strncmp(de->d_name, "records", 7) != 0 || nl < 13 ||
            strcmp(de->d_name + nl - 6, ".jsonl") != 0)
            continue;
        int rc = push_file(files, n, cap, p, de->d_name);
        if (rc != 0) {
            closedir(d);
            return rc;
        }
    }
    closedir(d);
    if (*n == first) {
        tb_cli_error("merge: %s holds no records*.jsonl", p);
        return TB_EINVAL;
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
    struct tb_cli_gate gates[TB_CLI_GATES_MAX];
    size_t ngates;
    int json, csv;
};

static int option(void *ud, int c, const char *arg)
{
    struct merge_args *a = ud;
    switch (c) {
    case O_JSON: a->json = 1; return 0;
    case O_CSV: a->csv = 1; return 0;
    case O_REQUIRE: return tb_cli_gate_option(a->gates, &a->ngates, arg);
    default: return TB_CLI_NOT_MINE;
    }
}

/* Everything one `ttsbuf merge` holds, from its options to its verdict. */
struct merge {
    struct merge_args a;
    struct tb_bench_meta meta; /* the first file's, then the merged run's */
    struct tb_bench_recs recs;
    struct tb_bench_summary *sums;
    char **files;
    size_t nfiles, cap;
    unsigned char *seen; /* shards read */
};

/* The options and the records files (each directory's records*.jsonl). */
static int gather(struct merge *x, int argc, char **argv)
{
    int first, rc = tb_cli_parse(argc, argv, &tb_doc_merge, option, &x->a, &first);
    if (rc != 0)
        return rc;
    if (first == argc) {
        tb_cli_error("merge: give the records files or directories (see ttsbuf merge --help)");
        return TB_EINVAL;
    }
    tb_cli_gates_default(x->a.gates, &x->a.ngates);
    for (int i = first; rc == 0 && i < argc; i++)
        rc = add_path(argv[i], &x->files, &x->nfiles, &x->cap);
    return rc;
}

/* Reads every file: one run's shards, each once, none missing. */
static int read_shards(struct merge *x)
{
    struct tb_bench_meta m;
    char err[512], why[1200];
    for (size_t i = 0; i < x->nfiles; i++) {
        int rc = tb_bench_read(x->files[i], &m, &x->recs, err, sizeof(err));
        if (rc != 0) {
            tb_cli_error("%s", err);
            return rc == TB_ENOMEM ? rc : TB_EINVAL; /* a file named on the command line */
        }
        if (i == 0) {
            x->meta = m;
            x->seen = calloc(m.nshards, 1);
            if (x->seen == NULL) {
                tb_cli_error("out of memory");
                return TB_ENOMEM;
            }
        } else if (!same_run(&x->meta, &m, why, sizeof(why))) {
            tb_cli_error("merge: %s is not of the run of %s: %s", x->files[i], x->files[0], why);
            return TB_EINVAL;
        }
        if (x->seen[m.shard]++) {
            tb_cli_error("merge: %s: shard %u of %u given twice", x->files[i], m.shard, m.nshards);
            return TB_EINVAL;
        }
    }
    for (uint32_t s = 0; s < x->meta.nshards; s++) {
        if (!x->seen[s]) {
            tb_cli_error("merge: shard %u of %u is missing", s, x->meta.nshards);
            return TB_EINVAL;
        }
    }
    return 0;
}

/* A request twice means the same shard's records were given twice under
 * different names. */
static int check_unique(struct merge *x)
{
    struct tb_bench_recs *r = &x->recs;
    if (r->n > 1) /* qsort on no records would be handed a NULL array */
        qsort(r->v, r->n, sizeof(r->v[0]), cmp_id);
    for (size_t i = 1; i < r->n; i++) {
        if (r->v[i].level == r->v[i - 1].level && r->v[i].id == r->v[i - 1].id) {
            tb_cli_error("merge: request %llu of level %u appears twice",
                         (unsigned long long)r->v[i].id, r->v[i].level);
            return TB_EINVAL;
        }
    }
    return 0;
}

/* The summary of all the shards, as one run's, reported. */
static int report(struct merge *x)
{
    int rc;
    tb_cli_bench_report_warnings(&x->recs, 0);
    x->meta.shard = 0;
    x->meta.nshards = 1;
    x->sums = calloc(x->meta.nlevels > 0 ? x->meta.nlevels : 1, sizeof(*x->sums));
    if (x->sums == NULL) {
        tb_cli_error("out of memory summarising");
        return TB_ENOMEM;
    }
    rc = tb_cli_bench_summaries(&x->meta, &x->recs, x->sums);
    if (rc != 0)
        return rc;
    if (x->a.csv)
        tb_cli_bench_report_csv(stdout, &x->meta, x->sums);
    else if (x->a.json)
        tb_cli_bench_report_json(stdout, "merge", &x->meta, x->sums);
    else
        tb_cli_bench_report_human(stdout, "merge", &x->meta, x->sums, NULL, x->a.gates,
                                  x->a.ngates);
    (void)tb_cli_flush_stdout(); /* a failed write's errno, kept for the exit's line */
    return 0;
}

/* ttsbuf merge: gather the files, read the shards, check, report; the
 * gates' verdict. */
static int cmd_merge(int argc, char **argv)
{
    struct merge x;
    int rc, code;
    memset(&x, 0, sizeof(x));
    tb_bench_recs_init(&x.recs);
    rc = gather(&x, argc, argv);
    if (rc == 0)
        rc = read_shards(&x);
    if (rc == 0)
        rc = check_unique(&x);
    if (rc == 0)
        rc = report(&x);
    if (rc != 0)
        code = tb_cli_exit(rc);
    else
        code = tb_cli_gates_check(x.a.gates, x.a.ngates, &x.meta, x.sums) > 0 ? TB_EXIT_GATE
                                                                              : TB_EXIT_OK;
    for (size_t i = 0; i < x.nfiles; i++)
        free(x.files[i]);
    free(x.files);
    free(x.seen);
    tb_cli_bench_summaries_free(&x.meta, x.sums);
    free(x.sums);
    tb_bench_recs_free(&x.recs);
    return code;
}
