/*
 * ttspreset.c - TTS engine presets from the compiled-in JSON (see
 * ttspreset.h).
 *
 * The JSON is parsed once per load and every value is copied out into
 * plain C values (strings into the set's own pool), then the cJSON tree
 * is deleted.  The rules checked here are what makes a preset honest: a
 * figure given has a source that exists, a figure missing has a note, a
 * latency is a spec ttslat.h accepts and needs no file.
 */
#include "ttsbuf/ttspreset.h"

#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ttspreset_data.h"
#include "ttsbuf/error.h"
#include "ttsbuf/ttslat.h"

struct tb_ttspreset_set {
    struct tb_ttspreset_source *src;
    size_t nsrc;
    struct tb_ttspreset *p;
    size_t n;
    char **pool; /* every string the set owns */
    size_t npool, cappool;
};

static const char *const policy_names[] = {"none", "chunk_length_schedule", "max_buffer_delay",
                                           "flush", "sentence"};

const char *tb_ttspreset_policy_name(enum tb_ttspreset_policy p)
{
    return (unsigned)p < sizeof(policy_names) / sizeof(policy_names[0]) ? policy_names[p] : "?";
}

/* A copy of s owned by the set, or NULL when out of memory. */
static const char *keep(struct tb_ttspreset_set *s, const char *str)
{
    char *c;
    if (s->npool == s->cappool) {
        size_t nc = s->cappool == 0 ? 64 : s->cappool * 2;
        char **np = realloc(s->pool, nc * sizeof(*np));
        if (np == NULL)
            return NULL;
        s->pool = np;
        s->cappool = nc;
    }
    c = strdup(str);
    if (c != NULL)
        s->pool[s->npool++] = c;
    return c;
}

/* The string member key of o: 1 with *out (kept) when it is a string, 0
 * when it is missing or null, -1 when it is something else or memory ran
 * out. */
static int str_member(struct tb_ttspreset_set *s, const cJSON *o, const char *key, const char **out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    *out = NULL;
    if (v == NULL || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsString(v))
        return -1;
    *out = keep(s, v->valuestring);
    return *out != NULL ? 1 : -1;
}

static const struct tb_ttspreset_source *find_source(const struct tb_ttspreset_set *s,
                                                     const char *id)
{
    for (size_t i = 0; i < s->nsrc; i++)
        if (s->src[i].id != NULL && strcmp(s->src[i].id, id) == 0)
            return &s->src[i];
    return NULL;
}

static int load_sources(struct tb_ttspreset_set *s, const cJSON *sources, char *err, size_t errlen)
{
    const cJSON *it;
    size_t i = 0;
    if (!cJSON_IsObject(sources))
        return tb_seterr(err, errlen, TB_EFORMAT, "tts presets: no \"sources\" object");
    s->nsrc = (size_t)cJSON_GetArraySize(sources);
    s->src = calloc(s->nsrc + 1, sizeof(*s->src));
    if (s->src == NULL)
        return tb_seterr(err, errlen, TB_ENOMEM, "tts presets: out of memory");
    cJSON_ArrayForEach(it, sources)
    {
        struct tb_ttspreset_source *x = &s->src[i++];
        if (!cJSON_IsObject(it) || it->string == NULL)
            return tb_seterr(err, errlen, TB_EFORMAT, "tts presets: a source is not an object");
        x->id = keep(s, it->string);
        if (x->id == NULL || str_member(s, it, "url", &x->url) < 0 ||
            str_member(s, it, "file", &x->file) < 0 || str_member(s, it, "date", &x->date) < 0 ||
            str_member(s, it, "measured_by", &x->measured_by) < 0)
            return tb_seterr(err, errlen, TB_EFORMAT,
                             "tts presets: source '%s': url, file, date and measured_by must be "
                             "strings or null",
                             it->string);
        if ((x->url == NULL) == (x->file == NULL))
            return tb_seterr(err, errlen, TB_EFORMAT,
                             "tts presets: source '%s': needs a url or a file (one of them)",
                             it->string);
        if (x->measured_by == NULL || x->measured_by[0] == '\0')
            return tb_seterr(err, errlen, TB_EFORMAT,
                             "tts presets: source '%s': no measured_by (who measured it)",
                             it->string);
        if (find_source(s, x->id) != x)
            return tb_seterr(err, errlen, TB_EFORMAT, "tts presets: source '%s' given twice",
                             it->string);
    }
    return 0;
}

/* The source and note of figure key of preset name (o: the figure's
 * object); known says whether the figure is given. */
static int fig_refs(struct tb_ttspreset_set *s, const char *name, const char *key, const cJSON *o,
                    int known, struct tb_ttspreset_fig *f, char *err, size_t errlen)
{
    const char *id = NULL;
    if (str_member(s, o, "source", &id) < 0 || str_member(s, o, "note", &f->note) < 0)
        return tb_seterr(err, errlen, TB_EFORMAT,
                         "tts presets: preset '%s': %s: source and note must be strings", name,
                         key);
    f->known = known;
    if (known && id == NULL)
        return tb_seterr(err, errlen, TB_EFORMAT,
                         "tts presets: preset '%s': %s is given without a source", name, key);
    if (!known && (f->note == NULL || f->note[0] == '\0'))
        return tb_seterr(err, errlen, TB_EFORMAT,
                         "tts presets: preset '%s': %s is null without a note saying why", name,
                         key);
    if (id != NULL) {
        f->source = find_source(s, id);
        if (f->source == NULL)
            return tb_seterr(err, errlen, TB_EFORMAT,
                             "tts presets: preset '%s': %s: unknown source '%s'", name, key, id);
    }
    return 0;
}

static int load_latency(struct tb_ttspreset_set *s, const char *name, const cJSON *o,
                        struct tb_ttspreset_fig *f, char *err, size_t errlen)
{
    const char *spec = NULL;
    int rc;
    if (!cJSON_IsObject(o) || str_member(s, o, "spec", &spec) < 0)
        return tb_seterr(err, errlen, TB_EFORMAT,
                         "tts presets: preset '%s': latency needs a \"spec\" string or null", name);
    rc = fig_refs(s, name, "latency", o, spec != NULL, f, err, errlen);
    if (rc == 0 && spec != NULL) {
        struct tb_ttslat *t = NULL;
        struct tb_ttslat_info in;
        char why[256];
        /* No file: a FILE spec gets no values and is refused. */
        rc = tb_ttslat_create_mem(spec, NULL, 0, 0, &t, why, sizeof(why));
        if (rc != 0)
            return tb_seterr(err, errlen, TB_EFORMAT, "tts presets: preset '%s': latency: %s", name,
                             why);
        tb_ttslat_info(t, &in);
        tb_ttslat_destroy(t);
        f->spec = spec;
        f->value = in.p50;
    }
    return rc;
}

/* A figure with a "value": a number in [lo, hi] (whole when whole) or
 * null. */
static int load_value(struct tb_ttspreset_set *s, const char *name, const char *key, const cJSON *o,
                      double lo, double hi, int whole, struct tb_ttspreset_fig *f, char *err,
                      size_t errlen)
{
    const cJSON *v = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, "value") : NULL;
    int rc;
    if (v == NULL || !(cJSON_IsNull(v) || cJSON_IsNumber(v)))
        return tb_seterr(err, errlen, TB_EFORMAT,
                         "tts presets: preset '%s': %s needs a \"value\" number or null", name,
                         key);
    rc = fig_refs(s, name, key, o, cJSON_IsNumber(v), f, err, errlen);
    if (rc == 0 && f->known) {
        double d = v->valuedouble;
        if (!(d >= lo && d <= hi) || (whole && d != floor(d)))
            return tb_seterr(err, errlen, TB_EFORMAT,
                             "tts presets: preset '%s': %s %g is outside %g..%g%s", name, key, d,
                             lo, hi, whole ? " (a whole number)" : "");
        f->value = d;
    }
    return rc;
}

/* The output mode: {"mode": "stream" | "whole", "source", "note"}, given
 * with its source. */
static int load_output(struct tb_ttspreset_set *s, const char *name, const cJSON *o,
                       struct tb_ttspreset_fig *f, char *err, size_t errlen)
{
    const char *mode = NULL;
    int rc;
    if (!cJSON_IsObject(o) || str_member(s, o, "mode", &mode) <= 0 ||
        (strcmp(mode, "stream") != 0 && strcmp(mode, "whole") != 0))
        return tb_seterr(err, errlen, TB_EFORMAT,
                         "tts presets: preset '%s': output needs a \"mode\", stream or whole",
                         name);
    rc = fig_refs(s, name, "output", o, 1, f, err, errlen);
    f->value = strcmp(mode, "whole") == 0 ? TB_TTS_WHOLE : TB_TTS_STREAM;
    return rc;
}

static int load_policy(struct tb_ttspreset_set *s, struct tb_ttspreset *p, const cJSON *o,
                       char *err, size_t errlen)
{
    const char *pol = NULL, *id = NULL;
    size_t k;
    if (!cJSON_IsObject(o) || str_member(s, o, "policy", &pol) <= 0 ||
        str_member(s, o, "source", &id) < 0 || str_member(s, o, "note", &p->policy_note) < 0)
        return tb_seterr(err, errlen, TB_EFORMAT,
                         "tts presets: preset '%s': chunking needs a \"policy\" string", p->name);
    for (k = 0; k < sizeof(policy_names) / sizeof(policy_names[0]); k++)
        if (strcmp(pol, policy_names[k]) == 0)
            break;
    if (k == sizeof(policy_names) / sizeof(policy_names[0]))
        return tb_seterr(err, errlen, TB_EFORMAT,
                         "tts presets: preset '%s': unknown chunking policy '%s'", p->name, pol);
    p->policy = (enum tb_ttspreset_policy)k;
    if (id != NULL && (p->policy_source = find_source(s, id)) == NULL)
        return tb_seterr(err, errlen, TB_EFORMAT,
                         "tts presets: preset '%s': chunking: unknown source '%s'", p->name, id);
    if ((p->policy == TB_TTSPRESET_SCHEDULE || p->policy == TB_TTSPRESET_MAX_DELAY) &&
        p->policy_source == NULL)
        return tb_seterr(err, errlen, TB_EFORMAT,
                         "tts presets: preset '%s': chunking %s is given without a source", p->name,
                         pol);
    if (p->policy == TB_TTSPRESET_SCHEDULE) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "schedule"), *e;
        if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) < 1 ||
            cJSON_GetArraySize(a) > TB_TTSPRESET_SCHEDULE_MAX)
            return tb_seterr(err, errlen, TB_EFORMAT,
                             "tts presets: preset '%s': schedule needs 1..%d numbers", p->name,
                             TB_TTSPRESET_SCHEDULE_MAX);
        cJSON_ArrayForEach(e, a)
        {
            if (!cJSON_IsNumber(e) || !(e->valuedouble >= 1 && e->valuedouble <= 5000) ||
                e->valuedouble != floor(e->valuedouble))
                return tb_seterr(err, errlen, TB_EFORMAT,
                                 "tts presets: preset '%s': schedule entries are whole numbers "
                                 "of characters in 1..5000",
                                 p->name);
            p->schedule[p->schedule_n++] = (unsigned)e->valuedouble;
        }
    } else if (p->policy == TB_TTSPRESET_MAX_DELAY) {
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(o, "max_buffer_delay_ms");
        if (!cJSON_IsNumber(d) || !(d->valuedouble >= 0 && d->valuedouble <= 60000))
            return tb_seterr(err, errlen, TB_EFORMAT,
                             "tts presets: preset '%s': max_buffer_delay_ms needs a number in "
                             "0..60000",
                             p->name);
        p->max_delay_s = d->valuedouble / 1000.0;
    }
    return 0;
}

static int load_preset(struct tb_ttspreset_set *s, struct tb_ttspreset *p, const cJSON *o,
                       char *err, size_t errlen)
{
    int rc;
    if (!cJSON_IsObject(o) || str_member(s, o, "name", &p->name) <= 0 || p->name[0] == '\0')
        return tb_seterr(err, errlen, TB_EFORMAT, "tts presets: preset %zu has no name", s->n + 1);
    for (const char *c = p->name; *c != '\0'; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-' || *c == '.'))
            return tb_seterr(err, errlen, TB_EFORMAT,
                             "tts presets: preset %zu: a name is a-z, 0-9, '-' and '.' only",
                             s->n + 1);
    if (tb_ttspreset_find(s, p->name) != NULL)
        return tb_seterr(err, errlen, TB_EFORMAT, "tts presets: preset '%s' given twice", p->name);
    if (str_member(s, o, "engine", &p->engine) <= 0)
        return tb_seterr(err, errlen, TB_EFORMAT, "tts presets: preset '%s': no engine line",
                         p->name);
    if (str_member(s, o, "note", &p->note) <= 0 || p->note[0] == '\0' ||
        strchr(p->note, '\n') != NULL)
        return tb_seterr(err, errlen, TB_EFORMAT, "tts presets: preset '%s': no one-line note",
                         p->name);
    rc = load_latency(s, p->name, cJSON_GetObjectItemCaseSensitive(o, "latency"), &p->latency, err,
                      errlen);
    if (rc == 0)
        rc = load_value(s, p->name, "connect", cJSON_GetObjectItemCaseSensitive(o, "connect"), 0,
                        TB_TTSLAT_MAX, 0, &p->connect, err, errlen);
    if (rc == 0)
        rc = load_value(s, p->name, "concurrency",
                        cJSON_GetObjectItemCaseSensitive(o, "concurrency"), 1, 1000, 1,
                        &p->concurrency, err, errlen);
    if (rc == 0)
        rc = load_value(s, p->name, "rtf", cJSON_GetObjectItemCaseSensitive(o, "rtf"), 0, 100, 0,
                        &p->rtf, err, errlen);
    if (rc == 0)
        rc = load_output(s, p->name, cJSON_GetObjectItemCaseSensitive(o, "output"), &p->output, err,
                         errlen);
    if (rc == 0)
        rc = load_policy(s, p, cJSON_GetObjectItemCaseSensitive(o, "chunking"), err, errlen);
    return rc;
}

int tb_ttspreset_parse(const char *text, size_t len, struct tb_ttspreset_set **out, char *err,
                       size_t errlen)
{
    struct tb_ttspreset_set *s = calloc(1, sizeof(*s));
    cJSON *root = NULL;
    const cJSON *presets, *it;
    int rc = 0;
    if (s == NULL)
        return tb_seterr(err, errlen, TB_ENOMEM, "tts presets: out of memory");
    root = cJSON_ParseWithLength(text, len);
    presets = cJSON_GetObjectItemCaseSensitive(root, "presets");
    if (root == NULL)
        rc = tb_seterr(err, errlen, TB_EFORMAT, "tts presets: not JSON");
    else if (!cJSON_IsArray(presets) || cJSON_GetArraySize(presets) < 1)
        rc = tb_seterr(err, errlen, TB_EFORMAT, "tts presets: no \"presets\" array");
    if (rc == 0)
        rc = load_sources(s, cJSON_GetObjectItemCaseSensitive(root, "sources"), err, errlen);
    if (rc == 0) {
        s->p = calloc((size_t)cJSON_GetArraySize(presets), sizeof(*s->p));
        if (s->p == NULL)
            rc = tb_seterr(err, errlen, TB_ENOMEM, "tts presets: out of memory");
    }
    if (rc == 0 && s->p != NULL) /* (rc says so; the analyzer cannot see tb_seterr's code) */
        cJSON_ArrayForEach(it, presets)
        {
            rc = load_preset(s, &s->p[s->n], it, err, errlen);
            if (rc != 0)
                break;
            s->n++;
        }
    cJSON_Delete(root);
    if (rc != 0) {
        tb_ttspreset_destroy(s);
        return rc;
    }
    *out = s;
    return 0;
}

int tb_ttspreset_load(struct tb_ttspreset_set **out, char *err, size_t errlen)
{
    return tb_ttspreset_parse(tb_ttspreset_json, strlen(tb_ttspreset_json), out, err, errlen);
}

void tb_ttspreset_destroy(struct tb_ttspreset_set *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->npool; i++)
        free(s->pool[i]);
    free(s->pool);
    free(s->src);
    free(s->p);
    free(s);
}

const struct tb_ttspreset *tb_ttspreset_all(const struct tb_ttspreset_set *s, size_t *n)
{
    *n = s->n;
    return s->p;
}

const struct tb_ttspreset *tb_ttspreset_find(const struct tb_ttspreset_set *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->p[i].name != NULL && strcmp(s->p[i].name, name) == 0)
            return &s->p[i];
    return NULL;
}
