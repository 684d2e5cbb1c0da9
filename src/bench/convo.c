/*
 * convo.c - conversations to drive load with (see convo.h): a JSONL file
 * of ttsbuf's own shape or of ShareGPT records, a ShareGPT JSON array,
 * or the built-in set.  cJSON stays in this file: each conversation is
 * copied out into plain strings and the tree deleted.
 *
 * A JSONL file is read a line at a time under TB_CONVO_LINE_MAX (memory:
 * one line plus what is kept); a ShareGPT array is one document, read
 * whole under TB_CONVO_FILE_MAX and walked a record at a time
 * (base/jsonscan.h): memory is the file, what is kept (at most its size
 * again), and one record's cJSON tree under TB_JSON_PIECE_MAX (64 MiB),
 * so about twice the file plus 64 MiB at most.  A dataset larger than
 * the cap goes in as JSONL, one record a line, which the same reader
 * takes.
 */
#include "ttsbuf/convo.h"

#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/jsonfield.h"
#include "base/jsonscan.h"
#include "base/jsontext.h"
#include "base/readall.h"
#include "convo_data.h"
#include "ttsbuf/error.h"
#include "ttsbuf/utf8.h"

/* The messages below spell the caps out. */
_Static_assert(TB_CONVO_TURNS_MAX == 1000 && TB_CONVO_MAX == 100000, "the caps' messages");

void tb_convos_free(struct tb_convos *c)
{
    if (c == NULL)
        return;
    for (size_t i = 0; i < c->n; i++) {
        struct tb_convo *v = &c->v[i];
        for (size_t k = 0; k < v->n_turns; k++) {
            free(v->turns[k]);
            free(v->tools != NULL ? v->tools[k] : NULL);
        }
        free(v->turns);
        free(v->tools);
        free(v->id);
        free(v->system);
    }
    free(c->v);
    memset(c, 0, sizeof(*c));
}

/* Whether s holds anything but blanks. */
static int has_text(const char *s)
{
    for (; *s != '\0'; s++)
        if (*s != ' ' && *s != '\t' && *s != '\r' && *s != '\n')
            return 1;
    return 0;
}

/* Where a conversation is being read, for messages. */
struct where {
    const char *name;
    size_t line;  /* JSONL: the line; 0 in a ShareGPT array */
    size_t index; /* ShareGPT array: the record */
};

/* The one-line error "NAME:LINE: what" or "NAME: [I].what" (a ShareGPT
 * array's record I, from 0). */
static int fail(const struct where *w, int rc, char *err, size_t errlen, const char *what,
                const char *detail)
{
    if (w->line > 0)
        return tb_seterr(err, errlen, rc, "%s:%zu: %s%s", w->name, w->line, what, detail);
    return tb_seterr(err, errlen, rc, "%s: [%zu]%s%s%s", w->name, w->index, *what ? "." : "", what,
                     detail);
}

/* A new conversation at the end of c (zeroed), or NULL (TB_ENOMEM). */
static struct tb_convo *append(struct tb_convos *c, size_t *cap)
{
    if (c->n == *cap) {
        struct tb_convo *nv = tb_grow(c->v, cap, sizeof(*nv), 16);
        if (nv == NULL)
            return NULL;
        c->v = nv;
    }
    memset(&c->v[c->n], 0, sizeof(c->v[0]));
    return &c->v[c->n++]; /* owned now: freed with the rest on error */
}

/* Adds a turn to v (a copy of s), with its tools' JSON text (taken:
 * freed here on failure; NULL: none). */
static int add_turn(struct tb_convo *v, size_t *cap, const char *s, char *tools)
{
    if (v->n_turns == *cap) {
        size_t tcap = *cap;
        char **nt = tb_grow(v->turns, cap, sizeof(*nt), 8), **nl;
        if (nt == NULL) {
            free(tools);
            return TB_ENOMEM;
        }
        v->turns = nt;
        /* the tools grow with the turns: the same capacity */
        nl = realloc(v->tools, *cap * sizeof(*nl));
        if (nl == NULL) {
            *cap = tcap;
            free(tools);
            return TB_ENOMEM;
        }
        v->tools = nl;
    }
    v->tools[v->n_turns] = tools;
    if ((v->turns[v->n_turns] = strdup(s)) == NULL) {
        free(tools);
        return TB_ENOMEM;
    }
    v->n_turns++;
    return 0;
}

/* One tool of a turn's "tools" (OpenAI's function-tool shape): an object
 * with "type": "function" and "function": {"name": a name of 1..63
 * characters of A-Z a-z 0-9 _ -, "description": a string and
 * "parameters": an object, both optional}.  Returns NULL or a reason. */
static const char *bad_tool(const cJSON *t)
{
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(t, "type");
    const cJSON *fn = cJSON_GetObjectItemCaseSensitive(t, "function");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(fn, "name");
    const cJSON *desc = cJSON_GetObjectItemCaseSensitive(fn, "description");
    const cJSON *par = cJSON_GetObjectItemCaseSensitive(fn, "parameters");
    size_t n;
    if (!cJSON_IsObject(t) || !cJSON_IsString(type) || strcmp(type->valuestring, "function") != 0)
        return " is not a function tool ({\"type\": \"function\", \"function\": {...}})";
    if (!cJSON_IsObject(fn) || !cJSON_IsString(name))
        return ".function has no \"name\" string";
    n = strlen(name->valuestring);
    if (n == 0 || n >= TB_CONVO_TOOL_NAME_MAX ||
        strspn(name->valuestring, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                  "0123456789_-") != n)
        return ".function.name is not 1..63 characters of A-Z a-z 0-9 _ -";
    if (desc != NULL && !cJSON_IsString(desc))
        return ".function.description is not a string";
    if (par != NULL && !cJSON_IsObject(par))
        return ".function.parameters is not an object";
    return NULL;
}

/* A turn given as an object: {"text": the caller's words, "tools": the
 * tools the request offers (1..TB_CONVO_TOOLS_MAX function tools)}; at
 * names it for messages.  Adds it to v. */
static int object_turn(const cJSON *t, struct tb_convo *v, size_t *cap, const char *at,
                       const struct where *w, char *err, size_t errlen)
{
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(t, "text");
    const cJSON *tools = cJSON_GetObjectItemCaseSensitive(t, "tools"), *k;
    char what[96], *json = NULL;
    size_t i = 0;
    cJSON_ArrayForEach(k, t)
    {
        if (strcmp(k->string, "text") != 0 && strcmp(k->string, "tools") != 0) {
            snprintf(what, sizeof(what), "%s has a key other than \"text\" and \"tools\"", at);
            return fail(w, TB_EFORMAT, err, errlen, what, "");
        }
    }
    if (!cJSON_IsString(text) || !has_text(text->valuestring)) {
        snprintf(what, sizeof(what), "%s.text", at);
        return fail(w, TB_EFORMAT, err, errlen, what, " is not a non-blank string");
    }
    if (tools != NULL) {
        if (!cJSON_IsArray(tools) || cJSON_GetArraySize(tools) < 1 ||
            cJSON_GetArraySize(tools) > TB_CONVO_TOOLS_MAX) {
            snprintf(what, sizeof(what), "%s.tools", at);
            return fail(w, TB_EFORMAT, err, errlen, what, " is not an array of 1..16 tools");
        }
        cJSON_ArrayForEach(k, tools)
        {
            const char *why = bad_tool(k);
            if (why != NULL) {
                snprintf(what, sizeof(what), "%s.tools[%zu]", at, i);
                return fail(w, TB_EFORMAT, err, errlen, what, why);
            }
            i++;
        }
        if ((json = cJSON_PrintUnformatted(tools)) == NULL)
            return TB_ENOMEM;
    }
    return add_turn(v, cap, text->valuestring, json);
}

/* An optional non-blank string field into *out (a copy). */
static int opt_string(const cJSON *o, const char *key, char **out, const struct where *w, char *err,
                      size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (v == NULL)
        return 0;
    if (!cJSON_IsString(v))
        return fail(w, TB_EFORMAT, err, errlen, key, " is not a string");
    if (!has_text(v->valuestring))
        return fail(w, TB_EFORMAT, err, errlen, key, " is empty (leave it out)");
    if ((*out = strdup(v->valuestring)) == NULL)
        return TB_ENOMEM;
    return 0;
}

/* ttsbuf's own shape: {"id", "system", "turns"}. */
static int own_shape(const cJSON *o, struct tb_convo *v, const struct where *w, char *err,
                     size_t errlen)
{
    const cJSON *turns = cJSON_GetObjectItemCaseSensitive(o, "turns"), *t, *k;
    size_t cap = 0, i = 0;
    char at[48];
    int rc;
    cJSON_ArrayForEach(k, o)
    {
        if (strcmp(k->string, "id") != 0 && strcmp(k->string, "system") != 0 &&
            strcmp(k->string, "turns") != 0) {
            char what[96], key[48];
            /* The key is the file's: one safe line, cut at a character. */
            tb_jsonfield_line_of(k->string, strlen(k->string), key, sizeof(key));
            snprintf(what, sizeof(what), "unknown key \"%s\"", key);
            return fail(w, TB_EFORMAT, err, errlen, what,
                        " (a conversation has \"turns\", and may have \"id\" and \"system\")");
        }
    }
    if ((rc = opt_string(o, "id", &v->id, w, err, errlen)) != 0 ||
        (rc = opt_string(o, "system", &v->system, w, err, errlen)) != 0)
        return rc;
    if (turns == NULL)
        return fail(w, TB_EFORMAT, err, errlen, "no \"turns\"",
                    " (the caller's turns: an array of strings)");
    if (!cJSON_IsArray(turns) || cJSON_GetArraySize(turns) == 0)
        return fail(w, TB_EFORMAT, err, errlen, "\"turns\"", " is not a non-empty array");
    cJSON_ArrayForEach(t, turns)
    {
        snprintf(at, sizeof(at), "turns[%zu]", i++);
        if (v->n_turns == TB_CONVO_TURNS_MAX)
            return fail(w, TB_ETOOBIG, err, errlen, "more than 1000 turns", "");
        if (cJSON_IsObject(t)) {
            if ((rc = object_turn(t, v, &cap, at, w, err, errlen)) != 0)
                return rc;
            continue;
        }
        if (!cJSON_IsString(t))
            return fail(w, TB_EFORMAT, err, errlen, at, " is not a string or a turn object");
        if (!has_text(t->valuestring))
            return fail(w, TB_EFORMAT, err, errlen, at, " is empty");
        if ((rc = add_turn(v, &cap, t->valuestring, NULL)) != 0)
            return rc;
    }
    return 0;
}

/* A ShareGPT record: {"id"?, "conversations": [{"from", "value"}, ...]}.
 * Returns 0 with v filled, 1 when it has no usable human turn (to be
 * skipped), or an error. */
static int sharegpt_record(const cJSON *o, struct tb_convo *v, const struct where *w, char *err,
                           size_t errlen)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(o, "conversations"), *m;
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
    size_t cap = 0, i = 0;
    int empty = 0, rc;
    char at[64];
    if (!cJSON_IsArray(list))
        return fail(w, TB_EFORMAT, err, errlen, "conversations", " is not an array");
    if (cJSON_IsString(id) && has_text(id->valuestring) &&
        (v->id = strdup(id->valuestring)) == NULL)
        return TB_ENOMEM;
    cJSON_ArrayForEach(m, list)
    {
        const cJSON *from = cJSON_GetObjectItemCaseSensitive(m, "from");
        const cJSON *value = cJSON_GetObjectItemCaseSensitive(m, "value");
        int human, system;
        snprintf(at, sizeof(at), "conversations[%zu]", i++);
        if (!cJSON_IsObject(m))
            return fail(w, TB_EFORMAT, err, errlen, at, " is not an object");
        if (!cJSON_IsString(from))
            return fail(w, TB_EFORMAT, err, errlen, at, ".from is not a string");
        human = strcmp(from->valuestring, "human") == 0 || strcmp(from->valuestring, "user") == 0;
        system = strcmp(from->valuestring, "system") == 0;
        if (!human && !system)
            continue; /* the model's answers: each call sends its own */
        if (!cJSON_IsString(value))
            return fail(w, TB_EFORMAT, err, errlen, at, ".value is not a string");
        if (!has_text(value->valuestring)) {
            empty |= human;
            continue;
        }
        if (system) {
            if (v->system == NULL && (v->system = strdup(value->valuestring)) == NULL)
                return TB_ENOMEM;
            continue;
        }
        if (v->n_turns == TB_CONVO_TURNS_MAX)
            return fail(w, TB_ETOOBIG, err, errlen, "conversations",
                        ": more than 1000 human turns");
        if ((rc = add_turn(v, &cap, value->valuestring, NULL)) != 0)
            return rc;
    }
    return v->n_turns == 0 || empty;
}

/* One object (a JSONL line or an array element) into c. */
static int take(const cJSON *o, struct tb_convos *c, size_t *cap, const struct where *w, char *err,
                size_t errlen)
{
    struct tb_convo *v;
    int rc;
    if (!cJSON_IsObject(o))
        return w->line > 0 ? fail(w, TB_EFORMAT, err, errlen, "not a JSON object", "")
                           : fail(w, TB_EFORMAT, err, errlen, "", ": not an object");
    if (c->n == TB_CONVO_MAX)
        return fail(w, TB_ETOOBIG, err, errlen, "more than 100000 conversations", "");
    if ((v = append(c, cap)) == NULL)
        return TB_ENOMEM;
    if (cJSON_GetObjectItemCaseSensitive(o, "conversations") == NULL)
        return own_shape(o, v, w, err, errlen);
    rc = sharegpt_record(o, v, w, err, errlen);
    if (rc == 1) {
        /* Nothing a call could send: skipped, and counted. */
        for (size_t k = 0; k < v->n_turns; k++)
            free(v->turns[k]);
        free(v->turns);
        free(v->tools);
        free(v->id);
        free(v->system);
        c->n--;
        c->skipped++;
        rc = 0;
    }
    return rc;
}

/* One JSONL line (len bytes, blanks at its end already cut). */
static int jsonl_line(const char *line, size_t len, struct tb_convos *c, size_t *cap,
                      const struct where *w, char *err, size_t errlen)
{
    const char *end = NULL;
    size_t bad = tb_utf8_check(line, len), e;
    cJSON *o;
    int rc;
    char what[64];
    if (bad != len) {
        snprintf(what, sizeof(what), "invalid UTF-8 at byte %zu", bad + 1);
        return fail(w, TB_EFORMAT, err, errlen, what, "");
    }
    o = tb_jsontext_parse(line, len, &end); /* lone surrogate escapes: U+FFFD */
    e = end != NULL && end >= line ? (size_t)(end - line) : 0;
    if (o != NULL)
        while (e < len && (line[e] == ' ' || line[e] == '\t'))
            e++;
    if (o == NULL || e != len) {
        cJSON_Delete(o);
        snprintf(what, sizeof(what), "invalid JSON near byte %zu", e + 1);
        return fail(w, TB_EFORMAT, err, errlen, what, "");
    }
    rc = take(o, c, cap, w, err, errlen);
    cJSON_Delete(o);
    return rc;
}

/* Cuts the blanks at a line's end (a CR of CRLF among them). */
static size_t trim_end(const char *s, size_t n)
{
    while (n > 0 && (s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    return n;
}

/* The checks every source ends with. */
static int finish(struct tb_convos *c, int rc, const char *name, char *err, size_t errlen)
{
    if (rc == 0 && c->n == 0)
        rc = c->skipped > 0 ? tb_seterr(err, errlen, TB_EEMPTY,
                                        "%s holds no conversation with a human turn (%zu skipped)",
                                        name, c->skipped)
                            : tb_seterr(err, errlen, TB_EEMPTY, "%s holds no conversation", name);
    if (rc == TB_ENOMEM)
        tb_seterr(err, errlen, rc, "%s: out of memory", name);
    if (rc != 0)
        tb_convos_free(c);
    return rc;
}

int tb_convos_builtin(struct tb_convos *c, char *err, size_t errlen)
{
    const char *p = tb_convo_builtin_jsonl;
    struct where w = {"built-in conversations", 0, 0};
    size_t cap = 0;
    int rc = 0;
    memset(c, 0, sizeof(*c));
    while (rc == 0 && *p != '\0') {
        const char *nl = strchr(p, '\n');
        size_t len = nl != NULL ? (size_t)(nl - p) : strlen(p);
        w.line++;
        if (trim_end(p, len) > 0)
            rc = jsonl_line(p, trim_end(p, len), c, &cap, &w, err, errlen);
        p += len + (nl != NULL);
    }
    return finish(c, rc, w.name, err, errlen);
}

/* A JSONL file from its first non-blank byte (lines lines before it). */
static int load_jsonl(FILE *f, const char *name, size_t lines, struct tb_convos *c, char *err,
                      size_t errlen)
{
    struct tb_lines in;
    struct where w = {name, 0, 0};
    size_t cap = 0;
    int rc = 0, got;
    tb_lines_init(&in, f, TB_CONVO_LINE_MAX);
    in.lineno = lines;
    while (rc == 0 && (got = tb_lines_next(&in)) == 1) {
        size_t len = trim_end(in.line, in.len);
        w.line = in.lineno;
        if (len > 0)
            rc = jsonl_line(in.line, len, c, &cap, &w, err, errlen);
    }
    if (rc == 0 && got < 0)
        rc = tb_lines_fail(&in, got, name, TB_CONVO_LINE_MAX, err, errlen);
    tb_lines_free(&in);
    return rc;
}

/* Where byte e of the array is, for a message: "NAME:LINE: ... near byte
 * N" (lead bytes, `lines` of them newlines, came before the array). */
static int bad_json(const char *name, const char *buf, size_t e, size_t lead, size_t lines,
                    char *err, size_t errlen)
{
    size_t line = lines + 1;
    for (size_t k = 0; k < e; k++)
        line += buf[k] == '\n';
    return tb_seterr(err, errlen, TB_EFORMAT, "%s:%zu: invalid JSON near byte %zu", name, line,
                     lead + e + 1);
}

/* Record w->index of the array, buf[vs..ve): parsed alone (priced first:
 * its tree within TB_JSON_PIECE_MAX) and taken. */
static int array_record(const char *buf, size_t vs, size_t ve, struct tb_convos *c, size_t *cap,
                        const struct where *w, size_t lead, size_t lines, char *err, size_t errlen)
{
    const char *end = NULL;
    size_t cost = tb_jsonscan_cost(buf + vs, ve - vs);
    cJSON *o;
    int rc;
    if (cost > TB_JSON_PIECE_MAX) {
        char what[128];
        snprintf(what, sizeof(what),
                 " would take about %zu MiB to read, over the cap of " TB_JSON_PIECE_MAX_TEXT
                 " for one record",
                 cost >> 20);
        return fail(w, TB_ETOOBIG, err, errlen, "", what);
    }
    o = tb_jsontext_parse(buf + vs, ve - vs, &end);
    if (o == NULL) {
        size_t e = end != NULL && end >= buf + vs ? (size_t)(end - buf) : vs;
        return bad_json(w->name, buf, e, lead, lines, err, errlen);
    }
    if (cJSON_IsObject(o) && cJSON_GetObjectItemCaseSensitive(o, "conversations") == NULL)
        rc = fail(w, TB_EFORMAT, err, errlen, "conversations", " is missing");
    else
        rc = take(o, c, cap, w, err, errlen);
    cJSON_Delete(o);
    return rc;
}

/*
 * A ShareGPT array from its first byte; lead bytes (lines newlines)
 * came before it, for the offsets in messages.  The array is walked
 * (base/jsonscan.h) and each record parsed alone, so memory is the file
 * and what is kept, plus one record's tree.
 */
static int load_sharegpt(FILE *f, const char *name, size_t lead, size_t lines, struct tb_convos *c,
                         char *err, size_t errlen)
{
    char *buf = NULL;
    size_t len = 0, e, cap = 0, ks, ke, vs, ve;
    struct where w = {name, 0, 0};
    struct tb_jsonscan_it it;
    int rc = tb_read_all(f, TB_CONVO_FILE_MAX, &buf, &len), more;
    if (rc == TB_ETOOBIG)
        rc = tb_seterr(err, errlen, rc,
                       "%s: over the " TB_CONVO_FILE_MAX_TEXT
                       " cap for a JSON array (give it as JSONL: one record a line)",
                       name);
    else if (rc == TB_EFORMAT)
        rc = tb_seterr(err, errlen, rc, "%s: a NUL byte at byte %zu (not a text file)", name,
                       lead + len + 1);
    else if (rc == TB_EIO)
        rc = tb_seterr(err, errlen, rc, "%s: %s", name, strerror(errno));
    if (rc != 0)
        goto out;
    if ((e = tb_utf8_check(buf, len)) != len) {
        rc =
            tb_seterr(err, errlen, TB_EFORMAT, "%s: invalid UTF-8 at byte %zu", name, lead + e + 1);
        goto out;
    }
    /* The whole array's shape first: a file cut short or with something
     * after the array is refused before anything is taken. */
    e = 0;
    if (tb_jsonscan_skip(buf, len, &e) == 0)
        while (e < len && (buf[e] == ' ' || buf[e] == '\t' || buf[e] == '\r' || buf[e] == '\n'))
            e++;
    if (e != len || tb_jsonscan_open(&it, buf, len, 0) != 0) {
        rc = bad_json(name, buf, e, lead, lines, err, errlen);
        goto out;
    }
    while ((more = tb_jsonscan_next(&it, &ks, &ke, &vs, &ve)) == 1) {
        w.index = it.index - 1;
        rc = array_record(buf, vs, ve, c, &cap, &w, lead, lines, err, errlen);
        if (rc != 0)
            break;
    }
    if (rc == 0 && more < 0)
        rc = bad_json(name, buf, it.pos, lead, lines, err, errlen);
out:
    free(buf);
    return rc;
}

int tb_convos_load(const char *path, struct tb_convos *c, char *err, size_t errlen)
{
    int is_stdin = strcmp(path, "-") == 0, ch, rc;
    const char *name = is_stdin ? "<stdin>" : path;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    size_t lead = 0, lines = 0;
    memset(c, 0, sizeof(*c));
    if (f == NULL)
        return tb_seterr(err, errlen, TB_EIO, "%s: %s", name, strerror(errno));
    /* The kind is the first byte after blanks, which are dropped (and
     * counted, so that lines and offsets are the file's own). */
    while ((ch = getc(f)) == ' ' || ch == '\t' || ch == '\r' || ch == '\n') {
        lead++;
        lines += ch == '\n';
    }
    if (ch == EOF && ferror(f)) {
        rc = tb_seterr(err, errlen, TB_EIO, "%s: %s", name, strerror(errno));
    } else {
        if (ch != EOF)
            ungetc(ch, f);
        rc = ch == '[' ? load_sharegpt(f, name, lead, lines, c, err, errlen)
                       : load_jsonl(f, name, lines, c, err, errlen);
    }
    if (!is_stdin)
        fclose(f);
    return finish(c, rc, name, err, errlen);
}
