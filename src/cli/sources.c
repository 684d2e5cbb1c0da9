/*
 * sources.c - where a command's token streams come from (sources.h): each
 * kind of source read one way, for the one stream of `sim` (and of the
 * mock under `run` and `bench`) and the many streams of `sweep`: a trace
 * (with its import hint when it is another tool's file), a synthetic spec
 * over a seed range, a preset, another tool's benchmark results
 * (cmd_import.c reads those), a directory or glob of traces.
 */
#include "sources.h"

#include <dirent.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "cmd_import.h"
#include "ttsbuf/error.h"
#include "ttsbuf/import.h"
#include "ttsbuf/preset.h"
#include "ttsbuf/synth.h"
#include "ttsbuf/trace.h"

/* A source the user named that cannot be read is bad input, whatever the
 * library said (a missing file is its TB_EIO); memory is the run's. */
static int bad_input(int rc)
{
    return rc == TB_ENOMEM ? TB_ENOMEM : TB_EINVAL;
}

int tb_cli_trace_error(const char *cmd, const char *path, int rc, const char *err)
{
    enum tb_import_format fmt;
    const char *what = NULL;
    char *buf = NULL;
    size_t n = 0;
    FILE *f = rc == TB_EFORMAT && strcmp(path, "-") != 0 ? fopen(path, "rb") : NULL;
    /* Another tool's benchmark result given as a trace is the common
     * mistake: its first 64 KiB say which tool's (as --import reads it). */
    if (f != NULL && (buf = malloc(65536)) != NULL)
        n = fread(buf, 1, 65536, f);
    if (f != NULL)
        fclose(f);
    if (n > 0 && tb_import_detect(buf, n, &fmt, &what) == 0 && what != NULL) {
        tb_cli_error("%s (this is %s, not a trace: read it with ttsbuf %s --import %s)", err, what,
                     cmd, path);
    } else {
        tb_cli_error("%s", err);
    }
    free(buf);
    return bad_input(rc);
}

/* One trace into s; a trace that holds no event (TB_EEMPTY: the recording
 * of a request that failed) is returned with its message in err, not
 * printed, for the caller to judge.  0, TB_EEMPTY, or an error
 * (printed). */
static int load_trace(const char *cmd, const char *path, struct tb_stream *s, char *err,
                      size_t errlen)
{
    struct tb_trace_file *tf = NULL;
    int rc = tb_trace_file_open(path, &tf, err, errlen);
    if (rc == 0)
        rc = tb_trace_file_next(tf, s, err, errlen);
    if (rc == 1 || rc == TB_EEMPTY) {
        int more = tb_trace_file_more(tf, err, errlen);
        if (more != 0) {
            tb_trace_file_close(tf);
            tb_cli_error("%s (%s)", err,
                         strcmp(cmd, "sim") == 0
                             ? "play one with --request ID, its record's id in records.jsonl"
                             : "sim --trace FILE --request ID plays one; sweep reads them all");
            return more;
        }
    }
    tb_trace_file_close(tf);
    if (rc == 1)
        rc = 0;
    if (rc == 0 || rc == TB_EEMPTY)
        return rc;
    return tb_cli_trace_error(cmd, path, rc, err);
}

/* The spec of a synthetic source: arg itself, or (preset) the spec of the
 * preset it names; *name the preset's entry.  0 or TB_EINVAL (printed). */
static int spec_of(const char *arg, int preset, struct tb_synth_spec *spec,
                   const struct tb_preset **p)
{
    char err[512];
    const char *text = arg;
    *p = NULL;
    tb_synth_default(spec);
    if (preset) {
        *p = tb_preset_find(arg);
        if (*p == NULL) {
            tb_cli_error("--preset: unknown preset '%s' (see ttsbuf sim --help)", arg);
            return TB_EINVAL;
        }
        text = (*p)->spec;
    }
    if (tb_synth_parse(text, spec, err, sizeof(err)) != 0) {
        if (preset)
            tb_cli_error("preset %s: %s", arg, err);
        else
            tb_cli_error("--synth: %s", err);
        return TB_EINVAL;
    }
    return 0;
}

/* The stream of a spec.  0 or TB_ENOMEM (printed). */
static int generate(const struct tb_synth_spec *spec, const char *what, struct tb_stream *s)
{
    if (tb_synth_generate(spec, s) == 0)
        return 0;
    tb_cli_error("out of memory generating %s", what);
    return TB_ENOMEM;
}

/* ---- One stream -------------------------------------------------------- */

int tb_cli_source_operand(struct tb_cli_common *a, const char *cmd, int argc, char **argv,
                          int first)
{
    if (first >= argc)
        return 0;
    if (first + 1 < argc) {
        tb_cli_error("%s: unexpected argument '%s' (one source: see ttsbuf %s --help)", cmd,
                     argv[first + 1], cmd);
        return TB_EINVAL;
    }
    /* What sweep does with its FILE arguments: a bare name is a trace. */
    a->trace = argv[first];
    a->nsources++;
    return 0;
}

int tb_cli_load_source(const struct tb_cli_common *a, const char *default_preset,
                       struct tb_stream *s, struct tb_report_src *src, char *label, size_t labellen)
{
    struct tb_synth_spec spec;
    const struct tb_preset *p;
    char err[512];
    int rc;

    if (a->nsources > 1) {
        tb_cli_error("give one source: a FILE (or --trace FILE), --synth or --preset");
        return TB_EINVAL;
    }
    if (a->trace != NULL) {
        src->kind = "trace";
        src->name = strcmp(a->trace, "-") == 0 ? "<stdin>" : a->trace;
        if (a->request >= 0) {
            snprintf(label, labellen, "%s, request %lld", src->name, a->request);
            src->name = label;
            rc = tb_trace_load_request(a->trace, a->request, s, err, sizeof(err));
            if (rc != 0 && rc != TB_EEMPTY)
                return tb_cli_trace_error("sim", a->trace, rc, err);
        } else {
            rc = load_trace("sim", a->trace, s, err, sizeof(err));
        }
        /* a recording of a request that never got an event: it failed, or
         * it answered with tool calls alone (nothing spoken) */
        if (rc == TB_EEMPTY && a->failed_ok &&
            (tb_end_class(s->end.kind) >= TB_END_CLASS_INCOMPLETE || s->ntools > 0))
            return 0;
        return rc == TB_EEMPTY ? tb_cli_trace_error("sim", a->trace, rc, err) : rc;
    }
    rc = a->synth != NULL ? spec_of(a->synth, 0, &spec, &p)
                          : spec_of(a->preset != NULL ? a->preset : default_preset, 1, &spec, &p);
    if (rc != 0)
        return rc;
    if (p == NULL) {
        src->kind = "synth";
        tb_synth_format(&spec, label, labellen);
    } else {
        src->kind = "preset";
        snprintf(label, labellen, "%s (%s)", p->name, p->spec);
    }
    src->name = label;
    return generate(&spec, "the stream", s);
}

int tb_cli_source_spec(const struct tb_cli_common *a, const char *default_preset,
                       struct tb_synth_spec *spec)
{
    const struct tb_preset *p;
    if (a->trace != NULL)
        return 0;
    if (a->synth != NULL)
        return spec_of(a->synth, 0, spec, &p) == 0;
    return spec_of(a->preset != NULL ? a->preset : default_preset, 1, spec, &p) == 0;
}

/* ---- Many streams ------------------------------------------------------ */

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
        return TB_ETOOBIG;
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
    return 0;
oom:
    tb_cli_error("out of memory loading %s", name);
    return TB_ENOMEM;
}

/* Each trace of the file at path (one, or a file of several: each named
 * "PATH#request=ID" then); a trace that holds no event (the recording of
 * a request that failed) is added, to be listed. */
static int add_trace(struct tb_cli_sources *l, const char *path)
{
    struct tb_trace_file *tf;
    struct tb_stream s;
    char err[512], name[4200];
    size_t n = 0;
    int rc = tb_trace_file_open(path, &tf, err, sizeof(err));
    if (rc != 0)
        return tb_cli_trace_error("sweep", path, rc, err);
    tb_stream_init(&s);
    while ((rc = tb_trace_file_next(tf, &s, err, sizeof(err))) == 1 || rc == TB_EEMPTY) {
        if (n++ == 0 && s.request < 0)
            snprintf(name, sizeof(name), "%s", path);
        else
            snprintf(name, sizeof(name), "%s#request=%lld", path, s.request);
        rc = tb_cli_sources_add(l, name, &s); /* takes the arrays; errors printed */
        tb_stream_free(&s);
        if (rc != 0) {
            tb_trace_file_close(tf);
            return rc;
        }
    }
    tb_stream_free(&s);
    tb_trace_file_close(tf);
    return rc < 0 ? tb_cli_trace_error("sweep", path, rc, err) : 0;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.jsonl files of dir, sorted by name, into *names (each and the
 * array malloc'd).  0, or TB_EINVAL / TB_ENOMEM (printed). */
static int list_dir(const char *dir, char ***names, size_t *n)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    size_t cap = 0, dl = strlen(dir);
    int rc = 0;
    *names = NULL;
    *n = 0;
    if (d == NULL) {
        tb_cli_error("--trace: cannot read the directory %s", dir);
        return TB_EINVAL;
    }
    while (rc == 0 && (de = readdir(d)) != NULL) {
        size_t nl = strlen(de->d_name);
        char *path;
        if (nl < 7 || strcmp(de->d_name + nl - 6, ".jsonl") != 0)
            continue;
        if (*n == cap) {
            char **nv = realloc(*names, (cap = cap ? cap * 2 : 64) * sizeof(*nv));
            if (nv == NULL) {
                rc = TB_ENOMEM;
                break;
            }
            *names = nv;
        }
        path = malloc(dl + nl + 2);
        if (path == NULL) {
            rc = TB_ENOMEM;
            break;
        }
        snprintf(path, dl + nl + 2, "%s%s%s", dir, dl > 0 && dir[dl - 1] == '/' ? "" : "/",
                 de->d_name);
        (*names)[(*n)++] = path;
    }
    closedir(d);
    if (rc != 0)
        tb_cli_error("out of memory listing %s", dir);
    else if (*n == 0) {
        tb_cli_error("--trace: no *.jsonl file in the directory %s", dir);
        rc = TB_EINVAL;
    }
    if (*n > 0)
        qsort(*names, *n, sizeof(**names), cmp_name);
    return rc;
}

/* Every *.jsonl in dir, sorted by name. */
static int add_dir(struct tb_cli_sources *l, const char *dir)
{
    char **names;
    size_t n;
    int rc = list_dir(dir, &names, &n);
    for (size_t i = 0; i < n; i++) {
        if (rc == 0)
            rc = add_trace(l, names[i]);
        free(names[i]);
    }
    free(names);
    return rc;
}

int tb_cli_sources_add_path(struct tb_cli_sources *l, const char *arg)
{
    struct stat st;
    glob_t g;
    int rc;
    if (strcmp(arg, "-") == 0 || stat(arg, &st) == 0)
        /* NOLINTNEXTLINE(clang-analyzer-core.UndefinedBinaryOperatorResult): stat set st */
        return strcmp(arg, "-") != 0 && S_ISDIR(st.st_mode) ? add_dir(l, arg) : add_trace(l, arg);
    if (strpbrk(arg, "*?[") == NULL)
        return add_trace(l, arg); /* names the missing file */
    rc = glob(arg, 0, NULL, &g);
    if (rc == GLOB_NOMATCH) {
        tb_cli_error("--trace: no file matches %s", arg);
        return TB_EINVAL;
    }
    if (rc != 0) {
        tb_cli_error("--trace: cannot expand %s", arg);
        return rc == GLOB_NOSPACE ? TB_ENOMEM : TB_EINVAL;
    }
    for (size_t i = 0; i < g.gl_pathc && rc == 0; i++)
        rc = add_trace(l, g.gl_pathv[i]);
    globfree(&g);
    return rc;
}

int tb_cli_sources_add_synth(struct tb_cli_sources *l, const char *arg, int preset, int seeds,
                             uint64_t seed_lo, uint64_t seed_hi)
{
    struct tb_synth_spec spec;
    const struct tb_preset *p;
    struct tb_stream s;
    char name[600], canon[512];
    int rc = spec_of(arg, preset, &spec, &p);
    if (rc != 0)
        return rc;
    if (!seeds)
        seed_lo = seed_hi = spec.seed;
    tb_stream_init(&s);
    for (uint64_t seed = seed_lo; rc == 0; seed++) {
        spec.seed = seed;
        tb_stream_clear(&s);
        rc = generate(&spec, arg, &s);
        if (rc != 0)
            break;
        if (preset) {
            snprintf(name, sizeof(name), "preset:%s,seed=%llu", arg, (unsigned long long)seed);
        } else {
            tb_synth_format(&spec, canon, sizeof(canon));
            snprintf(name, sizeof(name), "synth:%s", canon);
        }
        rc = tb_cli_sources_add(l, name, &s);
        if (seed == seed_hi)
            break;
    }
    tb_stream_free(&s);
    return rc;
}

int tb_cli_sources_add_import(struct tb_cli_sources *l, const char *spec,
                              const struct tb_cli_import_opts *io)
{
    const char *path;
    struct tb_import im;
    char name[1200], note[400];
    size_t added = 0;
    int rc = tb_cli_import_load(spec, io, &im, &path);

    for (size_t i = 0; rc == 0 && i < im.n; i++) {
        struct tb_import_request *rq = &im.req[i];
        size_t content = 0;
        for (size_t k = 0; k < rq->stream.n; k++)
            content += rq->stream.ev[k].kind == TB_KIND_CONTENT;
        if (rq->error[0] != '\0' || content == 0)
            continue;
        snprintf(name, sizeof(name), "%s#%s", path, rq->name);
        rc = tb_cli_sources_add(l, name, &rq->stream);
        added += rc == 0;
    }
    if (rc == 0) {
        tb_cli_import_note(&im, spec, note, sizeof(note));
        if (added > 0 && note[0] != '\0')
            fprintf(stderr, "ttsbuf: note: %s: %s\n", path, note);
    }
    if (rc == 0 && added == 0) {
        tb_cli_error("--import %s: every one of the %zu requests failed or has no content: "
                     "nothing to sweep",
                     spec, im.n);
        rc = TB_CLI_EFAILED;
    }
    tb_import_free(&im);
    return rc;
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
