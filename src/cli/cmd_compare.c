/*
 * cmd_compare.c - `ttsbuf compare`: bench runs of several providers or
 * settings side by side.  Each run is read from its records (a records
 * file, or a --out directory, whose shards are merged as `ttsbuf merge`
 * merges them) and summarised per level exactly as bench summarises it;
 * the runs' options are held against each other first: those that change
 * what the numbers mean refuse the comparison (--force overrides), the
 * others are named.  Outputs: a table, --json, --csv, --html.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cJSON.h>

#include "cli.h"
#include "compare.h"
#include "compare_html.h"
#include "compare_rows.h"
#include "jsonout.h"
#include "optdoc.h"
#include "outputs.h"
#include "ttsbuf/bench.h"
#include "ttsbuf/error.h"

#define CMP_FILES_MAX 100000

enum { O_JSON = 300, O_CSV, O_HTML, O_FORCE };

static const struct tb_optdoc compare_rows[] = {
    {"json", O_JSON, NULL, "one JSON object (schema ttsbuf.compare) instead of the table", NULL},
    {"csv", O_CSV, NULL, "one CSV row per level and run", NULL},
    {"html", O_HTML, "FILE",
     "also write one self-contained page: the table, and per level the cumulative distribution "
     "of first audio and of silence, one line a run, and the gapless share and goodput per level",
     "For calls, first audio P95 by turn index as well. Runs with equal values stay visible: "
     "each line has its own dash pattern, points sit side by side, the legend names the run a "
     "line is the same as."},
    {"force", O_FORCE, NULL,
     "compare runs whose chunk policy, --min-chars or --wpm differ (refused without it: they "
     "measure first audio, silence, minimum TPS and gapless against different speech), or "
     "whose SLOs differ (goodput against different objectives); the output says which",
     NULL},
    TB_OPTDOC_END,
};

static const struct tb_optsec compare_secs[] = {
    {NULL, compare_rows},
    {NULL, tb_opt_help},
    {NULL, NULL},
};

static int cmd_compare(int argc, char **argv);

const struct tb_cmddoc tb_doc_compare = {
    "compare",
    "[OPTIONS] [NAME=]RUN RUN...",
    "Put bench runs of several providers or settings side by side: per level and\n"
    "run, the statistics of TTFT, first audio (ttfa_s), silence (gap_total_s) and\n"
    "minimum TPS, the gapless share and goodput (with bench --slo), recomputed\n"
    "from each run's records.  RUN\n"
    "is a records file or a bench --out directory (a sharded run's directory is\n"
    "merged as ttsbuf merge does); NAME= labels it, else the directory's name.\n"
    "The options that differ between runs are named; a different chunk policy,\n"
    "--min-chars, --wpm or SLOs refuses the comparison unless --force.\n\n",
    compare_secs,
    "0 compared; 2 bad usage, fewer than two runs, a bad or missing file, or runs whose "
    "options refuse the comparison (the message names the option); 3 the comparison failed "
    "(out of memory, a write that failed).",
    NULL,
    NULL,
    cmd_compare,
};

/* The options whose difference refuses a comparison: they change the
 * speech the streams are played against, so first audio, silence,
 * minimum TPS and the gapless share measure different things. */
static const char *const refusing[] = {"chunk", "min_chars", "wpm", "slo", NULL};

static int is_refusing(const char *key)
{
    for (int i = 0; refusing[i] != NULL; i++)
        if (strcmp(key, refusing[i]) == 0)
            return 1;
    return 0;
}

static int option(void *ud, int c, const char *arg)
{
    struct tb_cli_compare *x = ud;
    switch (c) {
    case O_JSON: x->json = 1; return 0;
    case O_CSV: x->csv = 1; return 0;
    case O_FORCE: x->force = 1; return 0;
    case O_HTML: x->html = arg; return tb_cli_output_probe("--html", arg);
    default: return TB_CLI_NOT_MINE;
    }
}

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* A label from the path: a directory's name, a records file's directory
 * when the file is records*.jsonl, else the file's name without .jsonl. */
static void label_of(const char *path, int dir, char *out, size_t len)
{
    char tmp[4096];
    size_t n;
    char *base;
    snprintf(tmp, sizeof(tmp), "%s", path);
    n = strlen(tmp);
    while (n > 1 && tmp[n - 1] == '/')
        tmp[--n] = '\0';
    base = strrchr(tmp, '/');
    base = base != NULL ? base + 1 : tmp;
    if (!dir && strncmp(base, "records", 7) == 0 && has_suffix(base, ".jsonl") && base != tmp) {
        base[-1] = '\0';
        base = strrchr(tmp, '/');
        base = base != NULL ? base + 1 : tmp;
    } else if (!dir && has_suffix(base, ".jsonl")) {
        base[strlen(base) - 6] = '\0';
    }
    snprintf(out, len, "%s", base[0] != '\0' ? base : path);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A file that is a bench summary (summary.json, merge --json) rather
 * than records: said so, since compare needs the per-stream values. */
static int is_summary(const char *path)
{
    FILE *f = fopen(path, "r");
    char head[256];
    size_t n;
    if (f == NULL)
        return 0;
    n = fread(head, 1, sizeof(head) - 1, f);
    fclose(f);
    head[n] = '\0';
    return strstr(head, "\"" TB_SCHEMA_BENCH_SUMMARY "\"") != NULL;
}

/* Whether a and b ran the same levels, in the same order. */
static int same_levels(const struct tb_bench_meta *a, const struct tb_bench_meta *b)
{
    if (a->nlevels != b->nlevels)
        return 0;
    for (uint32_t l = 0; l < a->nlevels; l++)
        if (a->levels[l].mode != b->levels[l].mode ||
            a->levels[l].concurrency != b->levels[l].concurrency ||
            a->levels[l].rate != b->levels[l].rate)
            return 0;
    return 1;
}

/* Reads one records file into r (the first) or checks it is a shard of
 * r's run.  0 or TB_EINVAL / TB_ENOMEM (printed). */
static int read_file(struct tb_cli_cmp_run *r, const char *file, int first, unsigned char **seen)
{
    struct tb_bench_meta m;
    char err[512];
    int rc;
    if (is_summary(file)) {
        tb_cli_error("compare: %s is a bench summary (" TB_SCHEMA_BENCH_SUMMARY "): compare "
                     "needs the per-stream records (records.jsonl, or the bench --out "
                     "directory)",
                     file);
        return TB_EINVAL;
    }
    rc = tb_bench_read(file, &m, &r->recs, err, sizeof(err));
    if (rc != 0) {
        tb_cli_error("compare: %s", err);
        return rc == TB_ENOMEM ? rc : TB_EINVAL;
    }
    if (first) {
        r->meta = m;
        *seen = calloc(m.nshards, 1);
        if (*seen == NULL) {
            tb_cli_error("out of memory");
            return TB_ENOMEM;
        }
    } else if (m.nshards != r->meta.nshards || !same_levels(&m, &r->meta) ||
               strcmp(m.options, r->meta.options) != 0 || strcmp(m.model, r->meta.model) != 0) {
        tb_cli_error("compare: %s is not a shard of the run of the other records in %s (its "
                     "shards, levels, model or options differ; see ttsbuf merge)",
                     file, r->path);
        return TB_EINVAL;
    }
    if ((*seen)[m.shard]++) {
        tb_cli_error("compare: %s: shard %u of %u given twice", file, m.shard, m.nshards);
        return TB_EINVAL;
    }
    return 0;
}

/* The records*.jsonl in directory path, sorted, into *files (the caller
 * frees each and the array, also on an error).  0 or an error (printed). */
static int list_records(const char *path, char ***files, size_t *nf)
{
    DIR *d = opendir(path);
    struct dirent *de;
    int rc = 0;
    if (d == NULL) {
        tb_cli_error("compare: %s: %s", path, strerror(errno));
        return TB_EINVAL;
    }
    while (rc == 0 && (de = readdir(d)) != NULL) {
        char **nv;
        size_t len;
        if (strncmp(de->d_name, "records", 7) != 0 || !has_suffix(de->d_name, ".jsonl"))
            continue;
        len = strlen(path) + strlen(de->d_name) + 2;
        if (*nf == CMP_FILES_MAX) {
            tb_cli_error("compare: %s: more than %d records files", path, CMP_FILES_MAX);
            rc = TB_EINVAL;
            continue;
        }
        nv = realloc(*files, (*nf + 1) * sizeof(**files));
        if (nv != NULL) {
            *files = nv;
            nv[*nf] = malloc(len);
        }
        if (nv == NULL || nv[*nf] == NULL) {
            tb_cli_error("out of memory");
            rc = TB_ENOMEM;
            continue;
        }
        snprintf(nv[(*nf)++], len, "%s/%s", path, de->d_name);
    }
    closedir(d);
    if (rc == 0 && *nf == 0) {
        tb_cli_error("compare: %s holds no records*.jsonl (a bench --out directory has one)",
                     path);
        rc = TB_EINVAL;
    }
    if (rc == 0 && *nf > 1)
        qsort(*files, *nf, sizeof(**files), cmp_str);
    return rc;
}

/* Reads every records file of directory path into r, then checks that no
 * shard of the run is missing.  0 or an error (printed). */
static int read_files(struct tb_cli_cmp_run *r, const char *path, int dir)
{
    char **files = NULL;
    size_t nf = 0;
    unsigned char *seen = NULL;
    int rc = dir ? list_records(path, &files, &nf) : read_file(r, path, 1, &seen);
    for (size_t i = 0; dir && rc == 0 && i < nf; i++)
        rc = read_file(r, files[i], i == 0, &seen);
    for (uint32_t s = 0; rc == 0 && seen != NULL && s < r->meta.nshards; s++) {
        if (!seen[s]) {
            tb_cli_error("compare: %s: shard %u of %u is missing (give the directory that "
                         "holds every shard's records)",
                         path, s, r->meta.nshards);
            rc = TB_EINVAL;
        }
    }
    for (size_t i = 0; i < nf; i++)
        free(files[i]);
    free(files);
    free(seen);
    return rc;
}

/* Reads one run: [NAME=]PATH, a records file or a directory of them.
 * 0 or an error (printed). */
static int read_run(struct tb_cli_compare *x, const char *arg)
{
    struct tb_cli_cmp_run *r = &x->run[x->nrun];
    const char *eq = strchr(arg, '='), *path = arg;
    struct stat st;
    int rc, dir;

    /* NAME=PATH, unless the whole argument is a file ("c=2" is a trace's
     * name in bench's traces/). */
    if (eq != NULL && eq != arg && stat(arg, &st) != 0) {
        if ((size_t)(eq - arg) >= sizeof(r->label)) {
            tb_cli_error("compare: the name '%.*s' is longer than %zu bytes", (int)(eq - arg), arg,
                         sizeof(r->label) - 1);
            return TB_EINVAL;
        }
        snprintf(r->label, sizeof(r->label), "%.*s", (int)(eq - arg), arg);
        path = eq + 1;
    }
    r->path = path;
    tb_bench_recs_init(&r->recs);
    x->nrun++;
    if (stat(path, &st) != 0) {
        tb_cli_error("compare: %s: %s", path, strerror(errno));
        return TB_EINVAL;
    }
    dir = S_ISDIR(st.st_mode);
    if (r->label[0] == '\0')
        label_of(path, dir, r->label, sizeof(r->label));
    rc = read_files(r, path, dir);
    if (rc != 0)
        return rc;
    r->opts = cJSON_Parse(r->meta.options);
    if (!cJSON_IsObject(r->opts)) {
        cJSON_Delete(r->opts);
        r->opts = cJSON_CreateObject();
        if (r->opts == NULL) {
            tb_cli_error("out of memory");
            return TB_ENOMEM;
        }
    }
    return 0;
}

/* The options, the runs, their labels distinct. */
static int gather(struct tb_cli_compare *x, int argc, char **argv)
{
    int first, rc = tb_cli_parse(argc, argv, &tb_doc_compare, option, x, &first);
    if (rc != 0)
        return rc;
    if (argc - first < 2) {
        tb_cli_error("compare: give at least two runs (records files or bench --out "
                     "directories; see ttsbuf compare --help)");
        return TB_EINVAL;
    }
    if (argc - first > TB_CLI_CMP_RUNS_MAX) {
        tb_cli_error("compare: %d runs; at most %d", argc - first, TB_CLI_CMP_RUNS_MAX);
        return TB_EINVAL;
    }
    for (int i = first; rc == 0 && i < argc; i++)
        rc = read_run(x, argv[i]);
    for (size_t i = 0; rc == 0 && i < x->nrun; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(x->run[i].label, x->run[j].label) == 0) {
                tb_cli_error("compare: two runs named '%s' (%s, %s): name them, NAME=RUN",
                             x->run[i].label, x->run[j].path, x->run[i].path);
                rc = TB_EINVAL;
                break;
            }
    return rc;
}

/* Adds key (the run's value, JSON text, by run) to the differences when
 * the runs do not all have the same. */
static int add_diff(struct tb_cli_compare *x, const char *key, char *const *val)
{
    struct tb_cli_cmp_diff *d;
    int same = 1;
    for (size_t i = 1; i < x->nrun; i++)
        if ((val[i] == NULL) != (val[0] == NULL) || (val[i] != NULL && strcmp(val[i], val[0]) != 0))
            same = 0;
    if (same || x->ndiff == sizeof(x->diff) / sizeof(x->diff[0]))
        return 0;
    d = &x->diff[x->ndiff++];
    snprintf(d->key, sizeof(d->key), "%s", key);
    d->refuses = is_refusing(key);
    for (size_t i = 0; i < x->nrun; i++) {
        if (val[i] != NULL && (d->val[i] = strdup(val[i])) == NULL) {
            tb_cli_error("out of memory");
            return TB_ENOMEM;
        }
    }
    return 0;
}

/* A string as JSON text (for the run-wide fields beside the options). */
static char *json_str(const char *s)
{
    cJSON *j = cJSON_CreateString(s);
    char *t = j != NULL ? cJSON_PrintUnformatted(j) : NULL;
    cJSON_Delete(j);
    return t;
}

/* The SLOs (bench --slo) as a difference: each run's object as JSON text,
 * none (NULL) for a run without. */
static int diff_slo(struct tb_cli_compare *x)
{
    char *val[TB_CLI_CMP_RUNS_MAX] = {NULL};
    int rc = 0;
    for (size_t i = 0; i < x->nrun; i++) {
        cJSON *j;
        if (x->run[i].meta.slo.set == 0)
            continue;
        j = tb_bench_slo_json(&x->run[i].meta.slo);
        val[i] = j != NULL ? cJSON_PrintUnformatted(j) : NULL;
        cJSON_Delete(j);
        if (val[i] == NULL)
            rc = TB_ENOMEM;
    }
    if (rc != 0)
        tb_cli_error("out of memory");
    else
        rc = add_diff(x, "slo", val);
    for (size_t i = 0; i < x->nrun; i++)
        cJSON_free(val[i]);
    return rc;
}

/* The calls' settings (bench --conversations: the header's
 * "conversations" block: source, count, turns, user_turn, barge_in, ...)
 * as differences, each key "conversations.KEY"; a run without calls has
 * none (NULL). */
static int diff_calls(struct tb_cli_compare *x)
{
    cJSON *cv[TB_CLI_CMP_RUNS_MAX] = {NULL}, *it;
    char *val[TB_CLI_CMP_RUNS_MAX] = {NULL};
    int rc = 0;
    for (size_t i = 0; i < x->nrun; i++)
        cv[i] = x->run[i].meta.conversations[0] ? cJSON_Parse(x->run[i].meta.conversations) : NULL;
    for (size_t r = 0; rc == 0 && r < x->nrun; r++) {
        cJSON_ArrayForEach(it, cv[r])
        {
            char key[80];
            int done = 0;
            for (size_t q = 0; q < r; q++)
                done |= cJSON_GetObjectItemCaseSensitive(cv[q], it->string) != NULL;
            if (done)
                continue;
            for (size_t i = 0; i < x->nrun; i++) {
                cJSON *v = cJSON_GetObjectItemCaseSensitive(cv[i], it->string);
                val[i] = v != NULL ? cJSON_PrintUnformatted(v) : NULL;
            }
            snprintf(key, sizeof(key), "conversations.%s", it->string);
            rc = add_diff(x, key, val);
            for (size_t i = 0; i < x->nrun; i++)
                cJSON_free(val[i]);
            if (rc != 0)
                break;
        }
    }
    for (size_t i = 0; i < x->nrun; i++)
        cJSON_Delete(cv[i]);
    return rc;
}

/* The differences: the model, provider and URL, then every option key
 * of any run, the calls' settings, then the SLOs; refused when one of `refusing` differs,
 * unless --force. */
static int diff_options(struct tb_cli_compare *x)
{
    static const char *const runwide[] = {"model", "provider", "base_url"};
    char *val[TB_CLI_CMP_RUNS_MAX] = {NULL};
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < 3; k++) {
        for (size_t i = 0; i < x->nrun; i++) {
            const struct tb_bench_meta *m = &x->run[i].meta;
            val[i] = json_str(k == 0   ? m->model
                              : k == 1 ? (m->provider[0] ? m->provider : "remote")
                                       : m->base_url);
        }
        rc = add_diff(x, runwide[k], val);
        for (size_t i = 0; i < x->nrun; i++)
            cJSON_free(val[i]);
    }
    for (size_t r = 0; rc == 0 && r < x->nrun; r++) {
        cJSON *it;
        cJSON_ArrayForEach(it, x->run[r].opts)
        {
            int done = 0;
            for (size_t q = 0; q < r; q++)
                done |= cJSON_GetObjectItemCaseSensitive(x->run[q].opts, it->string) != NULL;
            if (done)
                continue;
            for (size_t i = 0; i < x->nrun; i++) {
                cJSON *v = cJSON_GetObjectItemCaseSensitive(x->run[i].opts, it->string);
                val[i] = v != NULL ? cJSON_PrintUnformatted(v) : NULL;
            }
            rc = add_diff(x, it->string, val);
            for (size_t i = 0; i < x->nrun; i++)
                cJSON_free(val[i]);
            if (rc != 0)
                break;
        }
    }
    if (rc == 0)
        rc = diff_calls(x);
    if (rc == 0)
        rc = diff_slo(x);
    for (size_t d = 0; rc == 0 && d < x->ndiff; d++) {
        char vals[600];
        size_t k = 0;
        if (!x->diff[d].refuses || x->force)
            continue;
        vals[0] = '\0';
        for (size_t i = 0; i < x->nrun && k < sizeof(vals); i++)
            k += (size_t)snprintf(vals + k, sizeof(vals) - k, "%s%.40s %.60s", i > 0 ? ", " : "",
                                  x->run[i].label, x->diff[d].val[i] ? x->diff[d].val[i] : "-");
        tb_cli_error("compare: the runs differ in %s (%s): %s; --force compares them anyway",
                     x->diff[d].key, vals,
                     strcmp(x->diff[d].key, "slo") == 0
                         ? "goodput would count against different SLOs (bench --slo)"
                         : "first audio, silence, minimum TPS and gapless would measure "
                           "different speech");
        rc = TB_EINVAL;
    }
    return rc;
}

/* The levels of every run, by name, in the order first seen; each run
 * summarised at each (bench's summary of its records). */
static int summarise(struct tb_cli_compare *x)
{
    for (size_t r = 0; r < x->nrun; r++) {
        const struct tb_bench_meta *m = &x->run[r].meta;
        for (uint32_t l = 0; l < m->nlevels; l++) {
            char name[64];
            size_t k;
            tb_bench_level_name(&m->levels[l], name, sizeof(name));
            for (k = 0; k < x->nlevels && strcmp(x->levels[k], name) != 0; k++)
                ;
            if (k == x->nlevels)
                snprintf(x->levels[x->nlevels++], sizeof(x->levels[0]), "%s", name);
        }
    }
    x->sum = calloc(x->nlevels * x->nrun + 1, sizeof(*x->sum));
    x->lidx = calloc(x->nlevels * x->nrun + 1, sizeof(*x->lidx));
    if (x->sum == NULL || x->lidx == NULL)
        goto nomem;
    for (size_t k = 0; k < x->nlevels; k++) {
        for (size_t r = 0; r < x->nrun; r++) {
            const struct tb_bench_meta *m = &x->run[r].meta;
            int *li = &x->lidx[k * x->nrun + r];
            *li = -1;
            for (uint32_t l = 0; l < m->nlevels; l++) {
                char name[64];
                tb_bench_level_name(&m->levels[l], name, sizeof(name));
                if (strcmp(name, x->levels[k]) == 0)
                    *li = (int)l;
            }
            if (*li >= 0 &&
                tb_bench_summarize_slo(&x->run[r].recs, (uint32_t)*li, &x->run[r].meta.slo,
                                       &x->sum[k * x->nrun + r]) != 0)
                goto nomem;
        }
    }
    return 0;
nomem:
    tb_cli_error("out of memory summarising");
    return TB_ENOMEM;
}

static int report(struct tb_cli_compare *x)
{
    cJSON *doc = tb_cli_compare_json(x);
    char *json = doc != NULL ? cJSON_PrintUnformatted(doc) : NULL;
    int rc = 0;
    if (json == NULL) {
        cJSON_Delete(doc);
        tb_cli_error("out of memory");
        return TB_ENOMEM;
    }
    if (x->csv)
        tb_cli_compare_csv(stdout, x);
    else if (x->json)
        rc = printf("%s\n", json) < 0 ? TB_EIO : 0;
    else
        tb_cli_compare_human(stdout, x);
    if (rc == 0 && x->html != NULL)
        rc = tb_cli_compare_html(x, json);
    cJSON_free(json);
    cJSON_Delete(doc);
    return rc;
}

/* ttsbuf compare: read the runs, hold their options against each other,
 * summarise each level of each, report. */
static int cmd_compare(int argc, char **argv)
{
    struct tb_cli_compare *x = calloc(1, sizeof(*x));
    int rc;
    if (x == NULL) {
        tb_cli_error("out of memory");
        return tb_cli_exit(TB_ENOMEM);
    }
    rc = gather(x, argc, argv);
    if (rc == 0)
        rc = diff_options(x);
    if (rc == 0)
        rc = summarise(x);
    if (rc == 0)
        rc = report(x);
    for (size_t r = 0; r < x->nrun; r++) {
        tb_bench_recs_free(&x->run[r].recs);
        cJSON_Delete(x->run[r].opts);
    }
    for (size_t d = 0; d < x->ndiff; d++)
        for (size_t r = 0; r < x->nrun; r++)
            free(x->diff[d].val[r]);
    for (size_t i = 0; x->sum != NULL && i < x->nlevels * x->nrun; i++)
        tb_bench_summary_free(&x->sum[i]);
    free(x->sum);
    free(x->lidx);
    free(x);
    return tb_cli_exit(rc);
}
