/*
 * cli.h - the command-line layer's conventions (cli.c): the only code that
 * parses arguments, prints, or decides exit statuses.  Every file of
 * src/cli follows them; a file says nothing more about them.
 *
 * What a helper returns.  A function of src/cli that can fail returns 0
 * to go on, or a negative TB_E* code (error.h) once it has printed the
 * one-line error (tb_cli_error, naming the option, file or place): its
 * caller prints nothing more and hands the code up.  A writer (it only
 * writes a document into a FILE) and a parser that fills an err buffer
 * print nothing, as the library does: the step that called them says what
 * failed.  The code says what failed; a code a library function returned
 * is handed on when it says so, else replaced by the one that does (a
 * trace named on the command line that cannot be opened is bad input,
 * TB_EINVAL, whatever the library's TB_EIO meant).  One code is the CLI's
 * own, and two answers are not failures, each of one kind of function:
 *   TB_CLI_EFAILED   what the command was to measure failed before it could
 *                    play it: every request of an --import, the one asked
 *                    for
 *   TB_CLI_DONE      a step did all the command had to do (--help
 *                    printed): the command ends, with exit status 0
 *   TB_CLI_NOT_MINE  an option handler (tb_cli_parse) was given an option
 *                    that is not its own
 * A function that cannot fail returns what it computes, or nothing.
 *
 * Which failure is which exit status, in one place (tb_cli_exit), as
 * ttsbuf(1) says under EXIT STATUS:
 *   2  usage    the command line or an input is wrong: TB_EINVAL,
 *               TB_ERANGE (an option, its value, a file or output it names
 *               that cannot be used), TB_EFORMAT, TB_EEMPTY, TB_ETOOBIG (an
 *               input's content)
 *   3  runtime  the work failed while it ran: TB_ENOMEM, TB_EIO (a write
 *               that failed: a full disk, standard output; the speech
 *               output), TB_EDEVICE, TB_EBUSY, TB_ECANCELED (SIGINT,
 *               SIGTERM), TB_EFULL, TB_CLI_EFAILED
 * A command that ran to its end gives its verdict instead, an exit status
 * that the functions named *_verdict return: 0 what it measured is fine, 1
 * a gate it was asked for failed, 3 the request or stream it measured
 * failed.
 */
#ifndef TTSBUF_CLI_H
#define TTSBUF_CLI_H

#include <stddef.h>

enum { TB_EXIT_OK = 0, TB_EXIT_GATE = 1, TB_EXIT_USAGE = 2, TB_EXIT_FAILED = 3 };

/* The CLI's own failure, and the answers that are not failures (above). */
enum { TB_CLI_EFAILED = -100, TB_CLI_DONE = 1, TB_CLI_NOT_MINE = 2 };

/* The exit status for a helper's answer: 0 (and TB_CLI_DONE) is 0; a
 * TB_E* code is 2 or 3 by the table above. */
int tb_cli_exit(int rc);

/* Prints "ttsbuf: <message>\n" to stderr, the message made one safe
 * line first (base/jsonfield.h's tb_jsonfield_line_of: control characters
 * become blanks, bytes that are not UTF-8 '?'): a name a user typed or a
 * peer sent is echoed through it only.  At most 4 KiB. */
void tb_cli_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/*
 * Number options: the whole string, in range.  tb_cli_number_double and
 * tb_cli_number_size print nothing: they return 0, or TB_EINVAL (not a
 * number: "--flag: 'value' is not a number (allowed LO..HI)") or TB_ERANGE
 * ("--flag: 'value' is outside LO..HI"; a negative whole number for
 * tb_cli_number_size: "--flag: 'value' is negative (allowed LO..HI)") with
 * that message in err.
 * tb_cli_opt_double and tb_cli_opt_size are the same as helpers: the
 * message printed.
 */
int tb_cli_number_double(const char *flag, const char *s, double lo, double hi, double *out,
                         char *err, size_t errlen);
int tb_cli_number_size(const char *flag, const char *s, size_t lo, size_t hi, size_t *out,
                       char *err, size_t errlen);
int tb_cli_opt_double(const char *flag, const char *s, double lo, double hi, double *out);
int tb_cli_opt_size(const char *flag, const char *s, size_t lo, size_t hi, size_t *out);

/* A loop-threads option (bench's and serve's --threads N|auto): "auto"
 * is 0 (the command resolves it), else N in 1..hi; printed as the other
 * helpers, the message naming auto too. */
int tb_cli_opt_threads(const char *flag, const char *s, size_t hi, size_t *out);

/* A share option (--target-gapless): 0 < X <= 1, printed as the other
 * helpers; a percentage (1..100) is told what it is as a share. */
int tb_cli_opt_share(const char *flag, const char *s, double *out);

#endif
