/*
 * optdoc.h - one description per option.  Each command describes its
 * options once, as rows in tables; its getopt_long arrays, its --help and
 * the man page's option list are all made from those rows, so the three
 * cannot drift apart (curl's docs/cmdline-opts does the same with files).
 *
 * Adding an option is one row: {"long-name", KEY, "ARG", "help", "more"}
 * in the table of the command (or of the shared group) it belongs to
 * (before its TB_OPTDOC_END), then its case in the command's option
 * handler (tb_cli_parse).
 */
#ifndef TTSBUF_CLI_OPTDOC_H
#define TTSBUF_CLI_OPTDOC_H

#include <getopt.h>
#include <stdio.h>

/* One option. */
struct tb_optdoc {
    const char *name; /* long name without "--", or NULL (short only) */
    int key;          /* getopt_long's value; a printable ASCII key is also
                       * the short option (-q); 0 ends a table */
    const char *arg;  /* the argument's name, or NULL for a flag */
    const char *help; /* one line or a few, unwrapped: --help and man */
    const char *more; /* NULL, or further text for the man page only */
};

/* The row that ends a table. */
#define TB_OPTDOC_END                                                                              \
    {                                                                                              \
        NULL, 0, NULL, NULL, NULL                                                                  \
    }

/* A titled group of rows in a command's --help (title NULL: no heading). */
struct tb_optsec {
    const char *title;
    const struct tb_optdoc *rows; /* ends with key 0; NULL ends secs */
};

/* A command: its documentation, and the function that runs it. */
struct tb_cmddoc {
    const char *name;  /* "sim" */
    const char *usage; /* what follows "ttsbuf NAME" on the usage line */
    const char *about; /* --help's paragraph, lines broken as printed */
    const struct tb_optsec *secs;
    const char *exits;        /* "0 ran, ...": the exit statuses */
    void (*tail)(FILE *f);    /* --help only: tables after it, or NULL */
    const char *const *notes; /* man only: paragraphs after the options */
    /* Runs `ttsbuf NAME ARGS...` (argv[0] is NAME): returns the exit
     * status (cli.h). */
    int (*run)(int argc, char **argv);
};

/* Every command, in the order of `ttsbuf --help` (NULL-terminated): the
 * table main.c dispatches through. */
extern const struct tb_cmddoc *const tb_cmddocs[];

/* The getopt_long arrays a command's rows make. */
#define TB_CLI_OPTS_MAX 96
struct tb_cli_getopt {
    struct option lo[TB_CLI_OPTS_MAX + 1];
    char so[2 * TB_CLI_OPTS_MAX + 2]; /* ":" then a letter (and ':') each */
};

/* Fills g from d.  Returns 0, or TB_EINVAL (the error printed) when d has
 * more than TB_CLI_OPTS_MAX rows or a long name twice: a programming
 * error, which the docs test looks for in every command. */
int tb_cli_getopt_init(struct tb_cli_getopt *g, const struct tb_cmddoc *d);

/*
 * tb_cli_parse - every command's option loop: getopt_long over d's rows
 * (from argv[1]).  -h/--help prints d's help; every other option goes to
 * opt(ud, key, its value or NULL), which returns 0 when it took it,
 * TB_CLI_NOT_MINE when it is not one of its, or an error (printed) for a
 * bad value.  An option none takes, or one without its value, is one error
 * line.  With first NULL an operand (an argument that is not an option) is
 * an error; else *first is the index of the first.  Returns 0 to go on,
 * TB_CLI_DONE after --help, or an error (printed: TB_EINVAL for the
 * command line, or the handler's).
 */
int tb_cli_parse(int argc, char **argv, const struct tb_cmddoc *d,
                 int (*opt)(void *ud, int c, const char *arg), void *ud, int *first);

/* Writes text from column col (the caller has written up to it), words
 * wrapped at --help's width (79 columns), each new line indented by
 * indent, and a newline; a word longer than a line stands alone. */
void tb_cli_wrap(FILE *f, const char *text, size_t col, int indent);

/* Prints `ttsbuf NAME --help`: usage, about, sections, exit status, tail. */
void tb_cli_help(FILE *f, const struct tb_cmddoc *d);

/* Prints the roff of d's options and exit status for man/ttsbuf.1 (what
 * `ttsbuf --man-options` prints between the page's markers). */
void tb_cli_man(FILE *f, const struct tb_cmddoc *d);

/* Shared rows (common.c, request.c, audio.c). */
extern const struct tb_optdoc tb_opt_sources[]; /* --trace --synth --preset */
extern const struct tb_optdoc tb_opt_playout[]; /* --chunk ... --json */
extern const struct tb_optdoc tb_opt_report[];  /* --gaps --record --svg --html */
extern const struct tb_optdoc tb_opt_audio[];   /* --audio ... --latency */
extern const struct tb_optdoc tb_opt_request[]; /* --base-url ... -H */
extern const struct tb_optdoc tb_opt_help[];    /* -h, --help */

/* The command docs (each in its cmd_*.c). */
extern const struct tb_cmddoc tb_doc_sim, tb_doc_run, tb_doc_serve, tb_doc_sweep, tb_doc_bench,
    tb_doc_merge, tb_doc_compare;

#endif
