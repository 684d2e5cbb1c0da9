/*
 * sources.c - loading many named streams for `ttsbuf sweep` (sources.h).
 */
#include "sources.h"

#include <dirent.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "common.h"
#include "ttsbuf/error.h"
#include "ttsbuf/import.h"
#include "ttsbuf/preset.h"
#include "ttsbuf/synth.h"
#include "ttsbuf/trace.h"

void tb_cli_sources_init(struct tb_cli_sources *l)
{
    memset(l, 0, sizeof(*l));
}

void tb_cli_sources_free(struct tb_cli_sources *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].name);
        tb_stream_free(&l->v[i].s);
    }
    free(l->v);
    tb_cli_sources_init(l);
}

int tb_cli_sources_add(struct tb_cli_sources *l, const char *name, struct tb_stream *s)
{
    char *copy;
    if (l->n >= TB_SWEEP_INPUTS_MAX) {
        tb_cli_error("sweep: more than %u streams", TB_SWEEP_INPUTS_MAX);
        return TB_EXIT_USAGE;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        struct tb_cli_source *v = realloc(l->v, cap * sizeof(*v));
        if (v == NULL)
            goto oom;
        l->v = v;
        l->cap = cap;
    }
    copy = strdup(name);
    if (copy == NULL)
        goto oom;
    l->v[l->n].name = copy;
    l->v[l->n].s = *s;
    l->n++;
    tb_stream_init(s);
    return -1;
oom:
    tb_cli_error("out of memory loading %s", name);
    return TB_EXIT_USAGE;
}

static int add_trace(struct tb_cli_sources *l, const char *path)
{
    struct tb_stream s;
    char err[512];
    int code, rc;
    tb_stream_init(&s);
    rc = tb_trace_load_file(path, &s, err, sizeof(err));
    if (rc != 0 && rc != TB_EEMPTY) {
        tb_cli_trace_error("sweep", path, rc, err);
        tb_stream_free(&s);
        return TB_EXIT_USAGE;
    }
    code = tb_cli_sources_add(l, path, &s);
    tb_stream_free(&s);
    return code;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every *.jsonl in dir, sorted by name. */
static int add_dir(struct tb_cli_sources *l, const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char **names = NULL;
    size_t n = 0, cap = 0, dl = strlen(dir);
    int code = -1;
    if (d == NULL) {
        tb_cli_error("--trace: cannot read the directory %s", dir);
        return TB_EXIT_USAGE;
    }
    while ((de = readdir(d)) != NULL && code < 0) {
        size_t nl = strlen(de->d_name);
        char *path;
        if (nl < 7 || strcmp(de->d_name + nl - 6, ".jsonl") != 0)
            continue;
        if (n == cap) {
            char **nv = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof(*nv));
            if (nv == NULL) {
                code = TB_EXIT_USAGE;
                break;
            }
            names = nv;
        }
        path = malloc(dl + nl + 2);
        if (path == NULL) {
            code = TB_EXIT_USAGE;
            break;
        }
        snprintf(path, dl + nl + 2, "%s%s%s", dir, dl > 0 && dir[dl - 1] == '/' ? "" : "/",
                 de->d_name);
        names[n++] = path;
    }
    closedir(d);
    if (code >= 0)
        tb_cli_error("out of memory listing %s", dir);
    else if (n == 0) {
        tb_cli_error("--trace: no *.jsonl file in the directory %s", dir);
        code = TB_EXIT_USAGE;
    }
    if (n > 0)
        qsort(names, n, sizeof(*names), cmp_name);
    for (size_t i = 0; i < n; i++) {
        if (code < 0)
            code = add_trace(l, names[i]);
        free(names[i]);
    }
    free(names);
    return code;
}

int tb_cli_sources_add_path(struct tb_cli_sources *l, const char *arg)
{
    struct stat st;
    glob_t g;
    int code = -1, rc;
    if (strcmp(arg, "-") == 0 || stat(arg, &st) == 0)
        /* NOLINTNEXTLINE(clang-analyzer-core.UndefinedBinaryOperatorResult): stat set st */
        return strcmp(arg, "-") != 0 && S_ISDIR(st.st_mode) ? add_dir(l, arg) : add_trace(l, arg);
    if (strpbrk(arg, "*?[") == NULL)
        return add_trace(l, arg); /* names the missing file */
    rc = glob(arg, 0, NULL, &g);
    if (rc == GLOB_NOMATCH) {
        tb_cli_error("--trace: no file matches %s", arg);
        return TB_EXIT_USAGE;
    }
    if (rc != 0) {
        tb_cli_error("--trace: cannot expand %s", arg);
        return TB_EXIT_USAGE;
    }
    for (size_t i = 0; i < g.gl_pathc && code < 0; i++)
        code = add_trace(l, g.gl_pathv[i]);
    globfree(&g);
    return code;
}

int tb_cli_sources_add_synth(struct tb_cli_sources *l, const char *arg, int preset, int seeds,
                             uint64_t seed_lo, uint64_t seed_hi)
{
    struct tb_synth_spec spec;
    struct tb_stream s;
    char err[512], name[600], canon[512];
    const char *text = arg;
    int code = -1;
    tb_synth_default(&spec);
    if (preset) {
        const struct tb_preset *p = tb_preset_find(arg);
        if (p == NULL) {
            tb_cli_error("--preset: unknown preset '%s' (see ttsbuf sim --help)", arg);
            return TB_EXIT_USAGE;
        }
        text = p->spec;
    }
    if (tb_synth_parse(text, &spec, err, sizeof(err)) != 0) {
        tb_cli_error("--synth: %s", err);
        return TB_EXIT_USAGE;
    }
    if (!seeds)
        seed_lo = seed_hi = spec.seed;
    tb_stream_init(&s);
    for (uint64_t seed = seed_lo; code < 0; seed++) {
        spec.seed = seed;
        tb_stream_clear(&s);
        if (tb_synth_generate(&spec, &s) != 0) {
            tb_cli_error("out of memory generating %s", arg);
            code = TB_EXIT_USAGE;
            break;
        }
        if (preset) {
            snprintf(name, sizeof(name), "preset:%s,seed=%llu", arg, (unsigned long long)seed);
        } else {
            tb_synth_format(&spec, canon, sizeof(canon));
            snprintf(name, sizeof(name), "synth:%s", canon);
        }
        code = tb_cli_sources_add(l, name, &s);
        if (seed == seed_hi)
            break;
    }
    tb_stream_free(&s);
    return code;
}

int tb_cli_source_standing(const struct tb_cli_source *src)
{
    int cls = tb_end_class(src->s.end.kind);
    if (src->s.n == 0 && cls != TB_END_CLASS_INCOMPLETE)
        return TB_END_CLASS_FAILED; /* nothing arrived: a failed request */
    return cls;
}

struct tb_sweep_input *tb_cli_sources_inputs(const struct tb_cli_sources *l,
                                             struct tb_cli_standing *st)
{
    struct tb_sweep_input *in = malloc((l->n ? l->n : 1) * sizeof(*in));
    memset(st, 0, sizeof(*st));
    for (size_t i = 0; in != NULL && i < l->n; i++) {
        int cls = tb_cli_source_standing(&l->v[i]);
        if (cls == TB_END_CLASS_INCOMPLETE) {
            st->incomplete++;
            continue;
        }
        if (cls == TB_END_CLASS_FAILED) {
            st->failed++;
            continue;
        }
        st->unknown_end += cls == TB_END_CLASS_UNKNOWN;
        in[st->swept].name = l->v[i].name;
        in[st->swept].s = &l->v[i].s;
        st->swept++;
    }
    return in;
}

int tb_cli_sources_add_import(struct tb_cli_sources *l, const char *spec,
                              const struct tb_cli_import_opts *io)
{
    const char *path;
    struct tb_import im;
    char name[1200], note[400];
    size_t added = 0;
    int code = tb_cli_import_load(spec, io, &im, &path);
    if (code >= 0) {
        tb_import_free(&im);
        return code;
    }

    for (size_t i = 0; i < im.n && code < 0; i++) {
        struct tb_import_request *rq = &im.req[i];
        size_t content = 0;
        for (size_t k = 0; k < rq->stream.n; k++)
            content += rq->stream.ev[k].kind == TB_KIND_CONTENT;
        if (rq->error[0] != '\0' || content == 0)
            continue;
        snprintf(name, sizeof(name), "%s#%s", path, rq->name);
        code = tb_cli_sources_add(l, name, &rq->stream);
        if (code < 0) {
            tb_stream_init(&rq->stream); /* moved into the list */
            added++;
        }
    }
    tb_cli_import_note(&im, spec, note, sizeof(note));
    if (code < 0 && added > 0 && note[0] != '\0')
        fprintf(stderr, "ttsbuf: note: %s: %s\n", path, note);
    if (code < 0 && added == 0) {
        tb_cli_error("--import %s: every one of the %zu requests failed or has no content: "
                     "nothing to sweep",
                     spec, im.n);
        code = TB_EXIT_FAILED;
    }
    tb_import_free(&im);
    return code;
}
