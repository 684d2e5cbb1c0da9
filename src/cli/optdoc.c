/*
 * optdoc.c - getopt_long arrays, --help and the man page's option lists,
 * all made from the commands' option rows (see optdoc.h).
 */
#include "optdoc.h"

#include "cli.h"
#include "ttsbuf/error.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define HELP_COL 21   /* where --help's descriptions start */
#define HELP_WIDTH 79 /* the last column --help writes */

const struct tb_cmddoc *const tb_cmddocs[] = {
    &tb_doc_sim,   &tb_doc_run,   &tb_doc_serve,   &tb_doc_sweep,
    &tb_doc_bench, &tb_doc_merge, &tb_doc_compare, NULL,
};

const struct tb_optdoc tb_opt_help[] = {
    {"help", 'h', NULL, "this help", NULL},
    TB_OPTDOC_END,
};

static int is_short(int key)
{
    return key > ' ' && key < 127;
}

int tb_cli_getopt_init(struct tb_cli_getopt *g, const struct tb_cmddoc *d)
{
    size_t n = 0, ns = 0;
    memset(g, 0, sizeof(*g));
    g->so[ns++] = ':';
    for (const struct tb_optsec *s = d->secs; s->rows != NULL; s++)
        for (const struct tb_optdoc *r = s->rows; r->key != 0; r++) {
            if (is_short(r->key)) {
                if (ns + 3 > sizeof(g->so)) {
                    tb_cli_error("%s: too many short options", d->name);
                    return TB_EINVAL;
                }
                g->so[ns++] = (char)r->key;
                if (r->arg != NULL)
                    g->so[ns++] = ':';
            }
            if (r->name == NULL)
                continue;
            if (n == TB_CLI_OPTS_MAX) {
                tb_cli_error("%s: more than %d options", d->name, TB_CLI_OPTS_MAX);
                return TB_EINVAL;
            }
            for (size_t i = 0; i < n; i++)
                if (strcmp(g->lo[i].name, r->name) == 0) {
                    tb_cli_error("%s: --%s is described twice", d->name, r->name);
                    return TB_EINVAL;
                }
            g->lo[n].name = r->name;
            g->lo[n].has_arg = r->arg != NULL ? required_argument : no_argument;
            g->lo[n].val = r->key;
            n++;
        }
    return 0;
}

int tb_cli_parse(int argc, char **argv, const struct tb_cmddoc *d,
                 int (*opt)(void *ud, int c, const char *arg), void *ud, int *first)
{
    struct tb_cli_getopt g;
    int c, rc = tb_cli_getopt_init(&g, d);
    if (rc != 0)
        return rc;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, g.so, g.lo, NULL)) != -1) {
        if (c == 'h') {
            tb_cli_help(stdout, d);
            return TB_CLI_DONE;
        }
        rc = c == ':' || c == '?' ? TB_CLI_NOT_MINE : opt(ud, c, optarg);
        if (rc != TB_CLI_NOT_MINE && rc != 0)
            return rc; /* a bad value: printed */
        if (rc == 0)
            continue;
        if (c == ':')
            tb_cli_error("%s: %s needs a value", d->name, argv[optind - 1]);
        else
            tb_cli_error("%s: unknown option '%s' (see ttsbuf %s --help)", d->name,
                         argv[optind - 1], d->name);
        return TB_EINVAL;
    }
    if (first != NULL) {
        *first = optind;
        return 0;
    }
    if (optind < argc) {
        tb_cli_error("%s: unexpected argument '%s' (see ttsbuf %s --help)", d->name, argv[optind],
                     d->name);
        return TB_EINVAL;
    }
    return 0;
}

/* "-q, --quiet", "--wpm W", "-c LIST". */
static void label(char *buf, size_t len, const struct tb_optdoc *r)
{
    int k = 0;
    buf[0] = '\0';
    if (is_short(r->key))
        k = snprintf(buf, len, "-%c%s", r->key, r->name != NULL ? ", " : "");
    if (r->name != NULL && k >= 0 && (size_t)k < len)
        k += snprintf(buf + k, len - (size_t)k, "--%s", r->name);
    if (r->arg != NULL && k >= 0 && (size_t)k < len)
        snprintf(buf + k, len - (size_t)k, " %s", r->arg);
}

void tb_cli_wrap(FILE *f, const char *text, size_t col, int indent)
{
    const char *p = text;
    int first = 1;
    while (*p != '\0') {
        size_t w = strcspn(p, " ");
        if (!first && col + 1 + w > HELP_WIDTH) {
            fprintf(f, "\n%*s", indent, "");
            col = (size_t)indent;
        } else if (!first) {
            fputc(' ', f);
            col++;
        }
        first = 0;
        fwrite(p, 1, w, f);
        col += w;
        p += w;
        while (*p == ' ')
            p++;
    }
    fputc('\n', f);
}

void tb_cli_help(FILE *f, const struct tb_cmddoc *d)
{
    char lab[96];
    fprintf(f, "Usage: ttsbuf %s %s\n%s", d->name, d->usage, d->about);
    for (const struct tb_optsec *s = d->secs; s->rows != NULL; s++) {
        if (s->title != NULL)
            fprintf(f, "\n%s\n", s->title);
        for (const struct tb_optdoc *r = s->rows; r->key != 0; r++) {
            label(lab, sizeof(lab), r);
            if (strlen(lab) + 4 > HELP_COL) /* two blanks before the help */
                fprintf(f, "  %s\n%*s", lab, HELP_COL, "");
            else
                fprintf(f, "  %-*s", HELP_COL - 2, lab);
            tb_cli_wrap(f, r->help, HELP_COL, HELP_COL);
        }
    }
    fputs("\nExit status: ", f);
    tb_cli_wrap(f, d->exits, strlen("Exit status: "), 0);
    if (d->tail != NULL)
        d->tail(f);
}

enum { ROFF_CAP = 1, ROFF_DASHES = 2 };

/* roff text: '\' as \e, every '-' of a word that starts with '-' (an
 * option; with ROFF_DASHES every '-') as \- so that it renders and pastes
 * as ASCII, a leading '.' or '\'' guarded.  With ROFF_CAP, the first
 * letter in upper case. */
static void roff(FILE *f, const char *s, int flags)
{
    int opt = 0, cap = flags & ROFF_CAP;
    if (*s == '.' || *s == '\'')
        fputs("\\&", f);
    for (const char *p = s; *p != '\0'; p++) {
        if (p == s || strchr(" ([/,|='\"", p[-1]) != NULL)
            opt = *p == '-';
        if (isspace((unsigned char)*p))
            opt = 0;
        if (flags & ROFF_DASHES)
            opt = 1;
        if (*p == '\\')
            fputs("\\e", f);
        else if (*p == '-' && opt)
            fputs("\\-", f);
        else if (p == s && cap)
            fputc(toupper((unsigned char)*p), f);
        else
            fputc(*p, f);
    }
}

/* A description as a sentence: capitalised, ending in a full stop. */
static void roff_sentence(FILE *f, const char *s)
{
    size_t n = strlen(s);
    roff(f, s, ROFF_CAP);
    if (n > 0 && s[n - 1] != '.')
        fputc('.', f);
}

/* The --help tables after the options, as preformatted roff. */
static void man_tail(FILE *f, const struct tb_cmddoc *d)
{
    char *buf = NULL, *save = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (m == NULL)
        return;
    d->tail(m);
    if (fclose(m) == 0) {
        fputs(".PP\n.nf\n", f);
        for (char *line = strtok_r(buf, "\n", &save); line != NULL;
             line = strtok_r(NULL, "\n", &save)) {
            roff(f, line, 0);
            fputc('\n', f);
        }
        fputs(".fi\n", f);
    }
    free(buf);
}

void tb_cli_man(FILE *f, const struct tb_cmddoc *d)
{
    for (const struct tb_optsec *s = d->secs; s->rows != NULL; s++) {
        if (s->title != NULL) {
            fputs(".PP\n", f);
            roff(f, s->title, 0);
            fputc('\n', f);
        }
        for (const struct tb_optdoc *r = s->rows; r->key != 0; r++) {
            fputs(".TP\n", f);
            if (is_short(r->key))
                fprintf(f, "\\fB\\-%c\\fR%s", r->key, r->name != NULL ? ", " : "");
            if (r->name != NULL) {
                fputs("\\fB\\-\\-", f);
                roff(f, r->name, ROFF_DASHES);
                fputs("\\fR", f);
            }
            if (r->arg != NULL) {
                fputs(" \\fI", f);
                roff(f, r->arg, ROFF_DASHES);
                fputs("\\fR", f);
            }
            fputc('\n', f);
            roff_sentence(f, r->help);
            if (r->more != NULL) {
                fputc(' ', f);
                roff(f, r->more, 0);
            }
            fputc('\n', f);
        }
    }
    fputs(".PP\nExit status: ", f);
    roff_sentence(f, d->exits);
    fputc('\n', f);
    if (d->tail != NULL)
        man_tail(f, d);
    for (const char *const *n = d->notes; n != NULL && *n != NULL; n++) {
        fputs(".PP\n", f);
        roff(f, *n, 0);
        fputc('\n', f);
    }
}
