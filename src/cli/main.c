/*
 * main.c - the ttsbuf command: dispatches to a subcommand.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "jsonout.h"
#include "optdoc.h"
#include "outputs.h"
#include "ttsbuf/error.h"
#include "ttsbuf/http.h"
#include "ttsbuf/version.h"

static void usage(FILE *f)
{
    fprintf(f, "Usage: ttsbuf COMMAND [OPTIONS]\n"
               "Is this LLM provider fast enough to feed a speech engine without audible\n"
               "gaps, and how much buffer do I need?\n"
               "\n"
               "Commands:\n"
               "  sim        play a token stream (trace, synthetic or preset) out at speech\n"
               "             rate on a simulated clock; report underruns, time to first\n"
               "             audio and the minimum tokens/s\n"
               "  run        stream from an OpenAI-compatible endpoint (or the built-in mock)\n"
               "             and play it out live; record the trace\n"
               "  serve      a mock OpenAI-compatible provider with exact timing and faults\n"
               "  sweep      many streams x a grid of settings (pre-roll, chunking, rate...):\n"
               "             gap-free share, gaps, first audio, the pre-roll and TPS for a\n"
               "             target share, and the tuning picture\n"
               "  bench      many streams at once, per load level: TTFT, TPS, underruns and\n"
               "             gapless share as P50/P95/P99/min/max; gates; shards\n"
               "  merge      combine `bench --shard` records into one run's summary\n"
               "  compare    bench runs side by side: per level, TTFT, first audio, silence,\n"
               "             minimum TPS and gapless share; the options that differ\n"
               "\n"
               "  ttsbuf COMMAND --help   options of a command\n"
               "  ttsbuf --version        version\n"
               "\n"
               "With no command, `ttsbuf [OPTIONS]` is `ttsbuf sim [OPTIONS]`: the built-in\n"
               "demo stream unless a source is given (`ttsbuf --tts list` lists the TTS\n"
               "presets).\n");
}

static int dispatch(int argc, char **argv);

/* The roff of one command's options (or of every command's, each between
 * the markers man/ttsbuf.1 holds them in). */
static int man_options(const char *name)
{
    for (const struct tb_cmddoc *const *d = tb_cmddocs; *d != NULL; d++) {
        if (name != NULL && strcmp(name, (*d)->name) != 0)
            continue;
        if (name != NULL) {
            tb_cli_man(stdout, *d);
            return TB_EXIT_OK;
        }
        printf(".\\\" BEGIN OPTIONS %s\n", (*d)->name);
        tb_cli_man(stdout, *d);
        printf(".\\\" END OPTIONS %s\n", (*d)->name);
    }
    if (name == NULL)
        return TB_EXIT_OK;
    tb_cli_error("--man-options: unknown command '%s'", name);
    return tb_cli_exit(TB_EINVAL);
}

/* A reader that went away (`ttsbuf sim --record - | head -1`) makes
 * writes fail with EPIPE instead of killing the process with SIGPIPE, so
 * the files and whatever else still get written; the output then ends
 * quietly with the command's own status, as ripgrep does (the reader
 * chose to stop).  Any other write error is one line and a failed write's
 * exit status, 3 (or the command's own failure, already reported). */
static int finish_stdout(int code)
{
    int e;
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout))
        return code;
    e = errno != 0 ? errno : tb_cli_stdout_errno();
    if (e == EPIPE || tb_cli_stdout_gone())
        return code;
    if (code != TB_EXIT_OK && code != TB_EXIT_GATE)
        return code; /* its own error line was printed */
    tb_cli_error("cannot write standard output: %s", e != 0 ? strerror(e) : "write error");
    return tb_cli_exit(TB_EIO);
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    (void)tb_cli_started_at(); /* every document names this moment */
    return finish_stdout(dispatch(argc, argv));
}

static int dispatch(int argc, char **argv)
{
    /* libcurl's global state, once, before any thread (libcurl's rule). */
    if (tb_http_global_init() != 0) {
        tb_cli_error("cannot initialise libcurl");
        return tb_cli_exit(TB_EIO);
    }
    if (argc < 2)
        return tb_doc_sim.run(argc, argv);
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return TB_EXIT_OK;
    }
    /* Hidden: the man page's generated option lists (make man). */
    if (strcmp(argv[1], "--man-options") == 0)
        return man_options(argc > 2 ? argv[2] : NULL);
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
        printf("ttsbuf %s\n", tb_version());
        return TB_EXIT_OK;
    }
    for (const struct tb_cmddoc *const *d = tb_cmddocs; *d != NULL; d++)
        if (strcmp(argv[1], (*d)->name) == 0)
            return (*d)->run(argc - 1, argv + 1);
    /* No command, options: sim's (`ttsbuf --tts list`). */
    if (argv[1][0] == '-')
        return tb_doc_sim.run(argc, argv);
    tb_cli_error("unknown command '%s' (try ttsbuf --help)", argv[1]);
    return tb_cli_exit(TB_EINVAL);
}
