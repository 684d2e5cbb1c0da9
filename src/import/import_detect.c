/*
 * import_detect.c - telling the import formats apart from a file's content
 * (tb_import_detect, import.h), for `--import FILE` without a format and
 * for saying what a file looks like when the named format does not fit.
 * It reads keys, not values: the first object's keys name the writer (see
 * tests/data/import/README.md for which writer writes which).
 */
#include <string.h>

#include "import_detect.h"
#include "ttsbuf/error.h"

/* Whether "key" occurs as an object key in s[0..n): the quoted name, not
 * escaped, then blanks and a colon. */
static int has_key(const char *s, size_t n, const char *key)
{
    size_t kn = strlen(key);
    for (size_t i = 1; i + kn + 2 <= n; i++) {
        size_t j;
        if (s[i - 1] != '"' || memcmp(s + i, key, kn) != 0 || s[i + kn] != '"' ||
            (i >= 2 && s[i - 2] == '\\'))
            continue;
        for (j = i + kn + 1; j < n && (s[j] == ' ' || s[j] == '\t' || s[j] == '\r' || s[j] == '\n');
             j++)
            ;
        if (j < n && s[j] == ':')
            return 1;
    }
    return 0;
}

static const char vllm_or_sglang[] = "a vLLM or SGLang benchmark result";

int tb_import_detect(const char *buf, size_t len, enum tb_import_format *f, const char **what)
{
    /* The keys that tell the writers apart all come early in the first
     * object (see tests/data/import/README.md), so 64 KiB is plenty. */
    size_t n = len < 65536 ? len : 65536;
    static const struct {
        const char *key, *also;
        enum tb_import_format f;
        const char *what;
    } rules[] = {
        {"experiments", NULL, TB_IMPORT_GENAI_PERF, "a GenAI-Perf profile export"},
        {"start_perf_ns", NULL, TB_IMPORT_AIPERF_RAW,
         "an AIPerf raw record export (profile_export_raw.jsonl)"},
        {"metrics", "metadata", TB_IMPORT_AIPERF, "an AIPerf record export (profile_export.jsonl)"},
        {"input_config", NULL, TB_IMPORT__COUNT,
         "an AIPerf or GenAI-Perf summary, which keeps no per-request data: import AIPerf's "
         "profile_export.jsonl or GenAI-Perf's profile_export.json"},
        {"sharegpt_output_len", NULL, TB_IMPORT_SGLANG, "an SGLang bench_serving result"},
        {"random_range_ratio", NULL, TB_IMPORT_SGLANG, "an SGLang bench_serving result"},
        {"details", "tag", TB_IMPORT_SGLANG, "an SGLang bench_serving result"},
        {"model_id", NULL, TB_IMPORT_VLLM, "a vLLM bench serve result"},
        {"tokenizer_id", NULL, TB_IMPORT_VLLM, "a vLLM bench serve result"},
        {"ttfts", NULL, TB_IMPORT_VLLM, vllm_or_sglang},
    };
    *f = TB_IMPORT__COUNT;
    if (what != NULL)
        *what = NULL;
    for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
        if (!has_key(buf, n, rules[i].key) ||
            (rules[i].also != NULL && !has_key(buf, n, rules[i].also)))
            continue;
        *f = rules[i].f;
        if (what != NULL)
            *what = rules[i].what;
        return rules[i].f == TB_IMPORT__COUNT ? TB_EFORMAT : 0;
    }
    return TB_EFORMAT;
}

int tb_import_mismatch(enum tb_import_format f, const char *buf, size_t len, const char **what)
{
    enum tb_import_format d;
    int rc = tb_import_detect(buf, len, &d, what);
    if (*what == NULL)
        return 0; /* not recognised: let the reader judge */
    if (rc != 0)
        return 1;
    /* vllm and sglang write the same arrays: a file with nothing but
     * those is either. */
    if (*what == vllm_or_sglang && (f == TB_IMPORT_VLLM || f == TB_IMPORT_SGLANG))
        return 0;
    return d != f;
}
