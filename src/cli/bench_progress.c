/*
 * bench_progress.c - `ttsbuf bench`'s progress line (bench_progress.h).
 */
#include "bench_progress.h"

#include <math.h>
#include <string.h>

void tb_cli_progress_init(struct tb_cli_progress *p, const char *name, FILE *f, int tty)
{
    memset(p, 0, sizeof(*p));
    p->name = name;
    p->f = f;
    p->tty = tty;
    p->every = TB_CLI_PROGRESS_EVERY_S;
}

/* The time left, "ETA 24 s", "ETA 3.2 min", or "ETA -" before anything is
 * done: the time so far times what is left over what is done (a rate
 * that holds; the first turns, waiting for no caller, run faster than
 * the mean, so early estimates are low). */
static void eta_text(double t, size_t done, size_t total, char *buf, size_t len)
{
    double left;
    if (done == 0 || total < done || !(t > 0)) {
        snprintf(buf, len, "ETA -");
        return;
    }
    left = t * (double)(total - done) / (double)done;
    if (left < 120)
        snprintf(buf, len, "ETA %.0f s", left);
    else
        snprintf(buf, len, "ETA %.1f min", left / 60);
}

void tb_cli_progress_text(const struct tb_bench_progress *p, char *buf, size_t len)
{
    char eta[32], more[48] = "";
    if (p->warmup) {
        snprintf(buf, len, "warm-up  %zu in flight", p->inflight);
        return;
    }
    if (p->calls) {
        eta_text(p->t, p->turns_done, p->turns_target, eta, sizeof(eta));
        if (p->started < p->target)
            snprintf(more, sizeof(more), ", %zu to come", p->target - p->started);
        snprintf(buf, len,
                 "%6.1f s  %zu/%zu calls done%s: %zu waiting for the model, %zu speaking, %zu "
                 "listening; %zu/%zu turns, %zu errors; %s",
                 p->t, p->done, p->target, more, p->waiting_model, p->speaking, p->listening,
                 p->turns_done, p->turns_target, p->errors, eta);
        return;
    }
    if (p->target > 0) {
        eta_text(p->t, p->done, p->target, eta, sizeof(eta));
        snprintf(buf, len, "%6.1f s  %zu/%zu done  %zu in flight  %zu errors  %llu events; %s",
                 p->t, p->done, p->target, p->inflight, p->errors, (unsigned long long)p->events,
                 eta);
    } else {
        snprintf(buf, len, "%6.1f s  %zu done  %zu in flight  %zu errors  %llu events", p->t,
                 p->done, p->inflight, p->errors, (unsigned long long)p->events);
    }
}

void tb_cli_progress(void *ud, const struct tb_bench_progress *p)
{
    struct tb_cli_progress *pr = ud;
    char line[400];
    if (pr->tty) {
        tb_cli_progress_text(p, line, sizeof(line));
        fprintf(pr->f, "\r\033[K%s  %s", pr->name, line);
        return;
    }
    if (pr->next == 0)
        pr->next = pr->every;
    if (p->warmup || p->t < pr->next)
        return;
    /* the next multiple of every after t: one line however late the
     * callback came */
    pr->next = (floor(p->t / pr->every) + 1) * pr->every;
    tb_cli_progress_text(p, line, sizeof(line));
    fprintf(pr->f, "%s  %s\n", pr->name, line);
    fflush(pr->f);
}

void tb_cli_progress_end(const struct tb_cli_progress *p)
{
    if (p->tty)
        fprintf(p->f, "\r\033[K");
}
