/*
 * test_fuzz.c - what fuzzing found stays fixed.
 *
 * corpora_replay runs every fuzz target (tests/fuzz/fuzz_<name>.c, built
 * with the ordinary compiler and tests/fuzz/replay.c as main) over its
 * checked-in corpus, crashers included: the targets' properties are
 * checked on every input, under `make test`, `make asan` and valgrind.
 * The other cases pin each crasher's fix down as plain behaviour, reading
 * the crasher file itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../src/cli/cli.h"
#include "tests.h"
#include "ttsbuf/api.h"
#include "ttsbuf/convo.h"
#include "ttsbuf/reader.h"
#include "ttsbuf/error.h"
#include "ttsbuf/utf8.h"

static const char *fuzz_dir(void)
{
    const char *d = getenv("TB_FUZZDIR");
    return d != NULL ? d : "tests/fuzz";
}

static void corpora_replay(void **state)
{
    (void)state;
    const char *bin = getenv("TB_FUZZBIN");
    char **names;
    size_t n = tb_test_list(fuzz_dir(), "fuzz_", ".c", 1, &names);
    if (bin == NULL)
        bin = "build/fuzz";
    assert_true(n >= 7); /* sse, oai, api, trace, import, synth, opt at least */
    for (size_t i = 0; i < n; i++) {
        const char *name = names[i] + strlen("fuzz_");
        char cmd[2048];
        int st;
        snprintf(cmd, sizeof(cmd), "'%s/replay_%s' '%s/corpus/%s' >/dev/null", bin, name,
                 fuzz_dir(), name);
        st = system(cmd);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            fail_msg("fuzz target %s failed on its corpus: %s", name, cmd);
    }
    tb_test_free_names(names, n);
}

/* A string safe for a one-line message: valid UTF-8, no C0, DEL or C1. */
static void assert_safe_line(const char *s)
{
    size_t n = strlen(s);
    assert_int_equal(tb_utf8_check(s, n), n);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7F || (c == 0xC2 && (unsigned char)s[i + 1] < 0xA0))
            fail_msg("control byte 0x%02x at %zu in '%s'", c, i, s);
    }
}

static char *corpus_file(const char *target, const char *name, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/corpus/%s/%s", fuzz_dir(), target, name);
    return tb_test_slurp(path, len);
}

/* fuzz_oai found it: an error event's message with DEL and invalid UTF-8
 * went into the one-line error as it was.  Now control characters become
 * spaces and invalid bytes '?'. */
static void oai_error_message_made_safe(void **state)
{
    (void)state;
    struct tb_api_parser *p;
    struct tb_api_delta d;
    char err[128];
    size_t len;
    char *buf = corpus_file("oai", "crash-error-del-and-bad-utf8", &len);
    static const char hostile[] =
        "{\"error\":{\"message\":\" line one\\nline two\\u001b[31m red \\u0085 \\u00e9 \","
        "\"type\":\"bad\\r\\ntype\",\"code\":\"\\u0007\"},\"choices\":[]}";
    assert_int_equal(tb_api_parser_create(TB_API_CHAT, &p), 0);
    /* As found it also holds raw NULs, which are now an error of their own. */
    assert_int_equal(tb_api_parse_event(p, NULL, 0, buf, len, &d, err, sizeof(err)), TB_EFORMAT);
    assert_string_equal(err, "a NUL byte at byte 17 of the event");
    {
        size_t k = 0;
        for (size_t i = 0; i < len; i++)
            if (buf[i] != '\0')
                buf[k++] = buf[i];
        assert_int_equal(tb_api_parse_event(p, NULL, 0, buf, k, &d, err, sizeof(err)), 0);
    }
    assert_true(d.error);
    assert_safe_line(d.error_message);
    assert_string_equal(d.error_message, "?xA?? eed");
    assert_int_equal(tb_api_parse_event(p, NULL, 0, hostile, strlen(hostile), &d, err, sizeof(err)),
                     0);
    assert_true(d.error);
    assert_string_equal(d.error_message, "line one line two [31m red   \xc3\xa9");
    assert_string_equal(d.error_type, "bad  type");
    assert_string_equal(d.error_code, "");
    {
        /* The error body reader, the same way, and cut on a character. */
        static const char body[] = "{\"error\":{\"message\":\"\\u00e9\\u00e9\\u00e9\\u00e9x\"}}";
        char out[8];
        tb_reader_error_text(body, strlen(body), out, sizeof(out));
        assert_string_equal(out, "\xc3\xa9\xc3\xa9\xc3\xa9");
        tb_reader_error_text("\xff<title>a\x1b]0;b</title>", 22, out, sizeof(out));
        assert_string_equal(out, "a ]0;b");
    }
    tb_api_parser_destroy(p);
    free(buf);
}

/* fuzz_opt found it: "\r1" passed as the whole number 1 (strtoull skips
 * blanks).  Numbers are now the whole text, from its first byte. */
static void opt_numbers_reject_leading_blanks(void **state)
{
    (void)state;
    size_t len, z = 7;
    double d = 7;
    char err[256];
    char *buf = corpus_file("opt", "crash-size-leading-cr", &len);
    char text[64];
    assert_true(len >= 2 && len < sizeof(text));
    memcpy(text, buf + 1, len - 1);
    text[len - 1] = '\0';
    assert_int_equal(tb_cli_number_size("--n", text, 0, 100, &z, err, sizeof(err)), TB_EINVAL);
    assert_int_equal(z, 7);
    assert_int_equal(tb_cli_number_size("--n", " 5", 0, 100, &z, err, sizeof(err)), TB_EINVAL);
    assert_int_equal(tb_cli_number_size("--n", "\t5", 0, 100, &z, err, sizeof(err)), TB_EINVAL);
    assert_int_equal(tb_cli_number_size("--n", "-1", 0, 100, &z, err, sizeof(err)), TB_ERANGE);
    assert_string_equal(err, "--n: '-1' is negative (allowed 0..100)");
    assert_int_equal(tb_cli_number_size("--n", "-", 0, 100, &z, err, sizeof(err)), TB_EINVAL);
    assert_int_equal(tb_cli_number_size("--n", "-1.5", 0, 100, &z, err, sizeof(err)), TB_EINVAL);
    assert_int_equal(z, 7);
    assert_int_equal(tb_cli_number_double("--d", " 5", 0, 100, &d, err, sizeof(err)), TB_EINVAL);
    assert_int_equal(tb_cli_number_double("--d", "\n5", 0, 100, &d, err, sizeof(err)), TB_EINVAL);
    assert_true(d == 7);
    assert_int_equal(tb_cli_number_size("--n", "5", 0, 100, &z, err, sizeof(err)), 0);
    assert_int_equal(z, 5);
    assert_int_equal(tb_cli_number_double("--d", "2.5", 0, 100, &d, err, sizeof(err)), 0);
    assert_true(d == 2.5);
    free(buf);
}

/* Collects what a dialect's reader hands out. */
struct seen {
    int deltas, errors;
    char error[512];
};

static int on_api(void *ud, const struct tb_api_delta *a, uint64_t offset)
{
    struct seen *sn = ud;
    (void)offset;
    sn->deltas++;
    if (a->error) {
        sn->errors++;
        snprintf(sn->error, sizeof(sn->error), "%s", a->error_message);
    }
    return 0;
}

/* Feeds a fuzz_api input (dialect byte, two seed bytes, body) whole. */
static int feed_api_input(const char *name, struct seen *sn, char *err, size_t errlen)
{
    struct tb_api_parser *p;
    size_t len;
    char *buf = corpus_file("api", name, &len);
    int rc;
    assert_true(len >= 3);
    memset(sn, 0, sizeof(*sn));
    assert_int_equal(tb_api_parser_create((enum tb_api)(buf[0] % 4), &p), 0);
    rc = tb_api_feed(p, buf + 3, len - 3, on_api, sn, err, errlen);
    tb_api_parser_destroy(p);
    free(buf);
    return rc;
}

/* fuzz_api found it: Anthropic's (and Ollama's) error text went into the
 * one-line error with its newlines and escapes, as the OpenAI reader's once did. */
static void api_error_message_made_safe(void **state)
{
    (void)state;
    struct seen sn;
    char err[256];
    assert_int_equal(feed_api_input("crash-anthropic-error-control-bytes", &sn, err, sizeof(err)),
                     0);
    assert_int_equal(sn.errors, 1);
    assert_string_equal(sn.error, "Over loaded [0m");
    assert_safe_line(sn.error);
}

/* fuzz_api found it (UBSan): an NDJSON body starting with an empty line
 * did pointer arithmetic on the line buffer before it existed.  Its next
 * line, a control byte, an error object and then garbage, also showed
 * that text after an event's JSON object was ignored; it is an error now
 * (the malformed-JSON policy: the run stops there). */
static void api_ndjson_empty_first_line(void **state)
{
    (void)state;
    struct seen sn;
    char err[256];
    assert_int_equal(feed_api_input("crash-ollama-empty-first-line", &sn, err, sizeof(err)),
                     TB_EFORMAT);
    assert_string_equal(err, "bad event JSON ending at stream byte 73: unexpected data after the "
                             "JSON object at byte 49 of the event");
    {
        static const char body[] = "\n\n{\"message\":{\"content\":\" hi\"},\"done\":false} \n";
        struct tb_api_parser *p;
        memset(&sn, 0, sizeof(sn));
        assert_int_equal(tb_api_parser_create(TB_API_OLLAMA, &p), 0);
        assert_int_equal(tb_api_feed(p, body, strlen(body), on_api, &sn, err, sizeof(err)), 0);
        assert_int_equal(sn.deltas, 1);
        tb_api_parser_destroy(p);
    }
}

/* fuzz_convo found it: an unknown key with a control byte went into the
 * conversations reader's one-line error as it was (and a long key was cut
 * at a byte, which could split a character).  The key is now one safe
 * line, cut at a character. */
static void convo_unknown_key_made_safe(void **state)
{
    (void)state;
    char path[1024], err[512];
    struct tb_convos c;
    snprintf(path, sizeof(path), "%s/corpus/convo/crash-unknown-key-control", fuzz_dir());
    memset(&c, 0, sizeof(c));
    assert_int_equal(tb_convos_load(path, &c, err, sizeof(err)), TB_EFORMAT);
    assert_safe_line(err);
    assert_non_null(strstr(err, ":1: unknown key \"id??? ???I"));
    assert_int_equal(c.n, 0);
    {
        /* a key of two-byte characters cut where it no longer fits */
        static const char two[] =
            "{\"turns\": [\"hi\"], \""
            "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
            "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
            "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9x\xc3\xa9\xc3\xa9\xc3\xa9\": 1}\n";
        FILE *f;
        snprintf(path, sizeof(path), "/tmp/ttsbuf-fuzz-convo-key-%d.jsonl", (int)getpid());
        f = fopen(path, "w");
        assert_non_null(f);
        fputs(two, f);
        fclose(f);
        assert_int_equal(tb_convos_load(path, &c, err, sizeof(err)), TB_EFORMAT);
        remove(path);
        assert_safe_line(err);
        assert_non_null(strstr(err, "unknown key \"\xc3\xa9"));
    }
}

int tb_test_fuzz(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(corpora_replay),
        cmocka_unit_test(oai_error_message_made_safe),
        cmocka_unit_test(opt_numbers_reject_leading_blanks),
        cmocka_unit_test(api_error_message_made_safe),
        cmocka_unit_test(api_ndjson_empty_first_line),
        cmocka_unit_test(convo_unknown_key_made_safe),
    };
    return TB_RUN_GROUP("fuzz", tests);
}
