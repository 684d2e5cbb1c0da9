/*
 * bench_prompts.c - the prompt set of `ttsbuf bench` (see bench.h): a
 * built-in varied set, or a JSONL file.
 */
#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/jsontext.h"
#include "base/readall.h"
#include "ttsbuf/bench_prompts.h"
#include "ttsbuf/error.h"
#include "ttsbuf/utf8.h"

/* Questions a voice assistant gets, short and long, factual and open, so
 * answers vary in length and in how their sentences fall.  The first is
 * the article's own benchmark prompt. */
static const char *const builtin[] = {
    "Explain how transformer attention mechanisms work.",
    "Explain gradient descent in machine learning.",
    "What's the weather usually like in Lisbon in October?",
    "Give me a quick recipe for a weeknight vegetable curry.",
    "How do I reset a router that keeps dropping the connection?",
    "Tell me a short story about a lighthouse keeper and a storm.",
    "What are three tips for sleeping better?",
    "Summarise the causes of the French Revolution in a few sentences.",
    "How does compound interest work? Use an example with numbers.",
    "Can you help me plan a three-day trip to Kyoto?",
    "What's the difference between a virus and a bacterium?",
    "Yes or no: is it safe to charge my phone overnight? Explain briefly.",
};

int tb_bench_prompts_builtin(struct tb_bench_prompts *p)
{
    size_t n = sizeof(builtin) / sizeof(builtin[0]);
    memset(p, 0, sizeof(*p));
    p->v = calloc(n, sizeof(*p->v));
    if (p->v == NULL)
        return TB_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        p->v[i].prompt = strdup(builtin[i]);
        if (p->v[i].prompt == NULL) {
            p->n = i;
            tb_bench_prompts_free(p);
            return TB_ENOMEM;
        }
    }
    p->n = n;
    return 0;
}

void tb_bench_prompts_free(struct tb_bench_prompts *p)
{
    if (p == NULL)
        return;
    for (size_t i = 0; i < p->n; i++) {
        free(p->v[i].prompt);
        free(p->v[i].messages_json);
    }
    free(p->v);
    memset(p, 0, sizeof(*p));
}

/* One line's object into *out; a reason, or NULL. */
static const char *parse_line(const cJSON *o, struct tb_bench_prompt *out)
{
    const cJSON *pr = cJSON_GetObjectItemCaseSensitive(o, "prompt");
    const cJSON *ms = cJSON_GetObjectItemCaseSensitive(o, "messages");
    if ((pr != NULL) == (ms != NULL))
        return "give one of \"prompt\" (a string) or \"messages\" (an array)";
    if (pr != NULL) {
        if (!cJSON_IsString(pr) || pr->valuestring[0] == '\0')
            return "\"prompt\" is not a non-empty string";
        out->prompt = strdup(pr->valuestring);
        return out->prompt != NULL ? NULL : "out of memory";
    }
    if (!cJSON_IsArray(ms) || cJSON_GetArraySize(ms) == 0)
        return "\"messages\" is not a non-empty array";
    out->messages_json = cJSON_PrintUnformatted(ms);
    return out->messages_json != NULL ? NULL : "out of memory";
}

int tb_bench_prompts_load(const char *path, struct tb_bench_prompts *p, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    struct tb_lines in;
    size_t vcap = 0;
    int rc = 0, got = 0;
    memset(p, 0, sizeof(*p));
    if (f == NULL)
        return tb_seterr(err, errlen, TB_EIO, "--prompts: %s: %s", path, strerror(errno));
    /* A line at a time, the cap enforced as the bytes arrive. */
    tb_lines_init(&in, f, TB_BENCH_PROMPT_MAX);
    while (rc == 0 && (got = tb_lines_next(&in)) == 1) {
        const char *why = NULL;
        char *line = in.line;
        size_t len = in.len, lineno = in.lineno, bad;
        cJSON *o;
        while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' '))
            line[--len] = '\0';
        if (len == 0)
            continue;
        bad = tb_utf8_check(line, len);
        if (bad != len) {
            rc = tb_seterr(err, errlen, TB_EFORMAT, "%s:%zu: invalid UTF-8 at byte %zu", path,
                           lineno, bad + 1);
            break;
        }
        if (p->n == TB_BENCH_PROMPTS_MAX) {
            rc = tb_seterr(err, errlen, TB_ETOOBIG, "%s:%zu: more than %u prompts", path, lineno,
                           TB_BENCH_PROMPTS_MAX);
            break;
        }
        if (p->n == vcap) {
            struct tb_bench_prompt *nv = tb_grow(p->v, &vcap, sizeof(*nv), 16);
            if (nv == NULL) {
                rc = TB_ENOMEM;
                break;
            }
            p->v = nv;
        }
        memset(&p->v[p->n], 0, sizeof(p->v[0]));
        o = tb_jsontext_parse(line, (size_t)len, NULL); /* lone surrogate escapes: U+FFFD */
        if (!cJSON_IsObject(o))
            why = "not a JSON object";
        else
            why = parse_line(o, &p->v[p->n]);
        cJSON_Delete(o);
        p->n++; /* owned now, freed with the rest on error */
        if (why != NULL)
            rc = tb_seterr(err, errlen, TB_EFORMAT, "%s:%zu: %s", path, lineno, why);
    }
    if (rc == 0 && got < 0)
        rc = tb_lines_fail(&in, got, path, TB_BENCH_PROMPT_MAX, err, errlen);
    if (rc == 0 && p->n == 0)
        rc = tb_seterr(err, errlen, TB_EEMPTY, "--prompts: %s holds no prompt", path);
    tb_lines_free(&in);
    fclose(f);
    if (rc != 0)
        tb_bench_prompts_free(p);
    return rc;
}
