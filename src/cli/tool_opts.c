/*
 * tool_opts.c - bench's tool turns (see tool_opts.h): --tool-latency and
 * --filler.
 */
#include "tool_opts.h"

#include <cJSON.h>
#include <ctype.h>
#include <string.h>

#include "cli.h"
#include "tts_opts.h"
#include "ttsbuf/bench_calls.h"
#include "ttsbuf/error.h"
#include "ttsbuf/utf8.h"

#define FILLER_MAX 200 /* bytes of a filler phrase */

const struct tb_optdoc tb_opt_tool[] = {
    {"tool-latency", TB_O_TOOL_LATENCY, "SPEC",
     "when a turn's model calls a tool, the tool's wait before its result is sent, seconds, in "
     "--tts-latency's SPEC forms (default " TB_TOOL_LATENCY_DEFAULT ")",
     "A constant, lognormal:p50=A,p90=B, uniform:A..B, empirical:FILE or list:FILE; drawn per "
     "call and turn from --seed.  A turn offers tools when its conversation says so (the "
     "built-in set has some); the record's tool_s is the call's end to the second request "
     "(ttsbuf(1), CALLS, Tool calls)."},
    {"filler", TB_O_FILLER, "TEXT|builtin",
     "a phrase the agent says as soon as a tool call starts (builtin: \"" TB_FILLER_BUILTIN
     "\"), by the modelled TTS or the real one (--tts-url); the records say how much of the "
     "silence around the tool it fills",
     "At most 200 bytes of UTF-8.  With --tts-url the phrase goes to the TTS when the call "
     "starts, as a stream of its own, and its measured audio is what fills the silence "
     "(ttsbuf-model(7), Tool calls)."},
    TB_OPTDOC_END,
};

/* Whether a filler phrase can be said: a letter or digit (ASCII, or any
 * byte of a multi-byte UTF-8 character), and no control character (one
 * line). */
static int sayable(const char *s)
{
    int word = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        if (*p < 0x20 || *p == 0x7f)
            return 0;
        word |= isalnum(*p) || *p >= 0x80;
    }
    return word;
}

int tb_cli_tool_option(struct tb_cli_tool *t, int c, const char *arg)
{
    size_t n;
    switch (c) {
    case TB_O_TOOL_LATENCY: t->latency = arg; return 0;
    case TB_O_FILLER:
        n = strlen(arg);
        if (strcmp(arg, "builtin") == 0) {
            t->filler = TB_FILLER_BUILTIN;
            return 0;
        }
        if (!sayable(arg) || n > FILLER_MAX || tb_utf8_check(arg, n) != n) {
            tb_cli_error("--filler: give a phrase of 1..%d bytes of UTF-8 on one line with a word "
                         "in it, or builtin",
                         FILLER_MAX);
            return TB_EINVAL;
        }
        t->filler = arg;
        return 0;
    default: return TB_CLI_NOT_MINE;
    }
}

int tb_cli_tool_apply(struct tb_cli_tool *t, uint64_t seed, int calls)
{
    int rc;
    if (!calls && (t->latency != NULL || t->filler != NULL)) {
        tb_cli_error("bench: %s is for calls' tool turns: it needs --conversations FILE|builtin",
                     t->latency != NULL ? "--tool-latency" : "--filler");
        return TB_EINVAL;
    }
    if (!calls)
        return 0;
    rc = tb_cli_ttslat_create(
        "--tool-latency", t->latency != NULL ? t->latency : TB_TOOL_LATENCY_DEFAULT, seed, &t->lat);
    if (rc != 0)
        return TB_EINVAL;
    tb_ttslat_format(t->lat, t->spec, sizeof(t->spec));
    return 0;
}

void tb_cli_tool_free(struct tb_cli_tool *t)
{
    tb_ttslat_destroy(t->lat);
    t->lat = NULL;
}

void tb_cli_tool_json_opts(cJSON *opts, const struct tb_cli_tool *t)
{
    if (t->latency != NULL)
        cJSON_AddStringToObject(opts, "tool_latency", t->spec);
    if (t->filler != NULL)
        cJSON_AddStringToObject(opts, "filler", t->filler);
}
