/*
 * capq.c - a capacity shared by every stream of a run, first come, first
 * served (see capq.h).
 *
 * One mutex guards the count held and an intrusive FIFO of waiting
 * slots.  A lock-free queue would save a few hundred nanoseconds per
 * chunk, which a synthesis of hundreds of milliseconds does not notice;
 * the lock keeps the order of the queue and the clock readings one and
 * the same (both taken under it), which FCFS needs.  Nothing allocates
 * after create.
 */
#include "ttsbuf/capq.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>

#include "ttsbuf/error.h"

struct tb_capq {
    pthread_mutex_t mu;
    struct tb_clock *clk;
    int n, held, waiting;
    struct tb_capq_slot *head, *tail;
};

int tb_capq_create(int n, struct tb_clock *clk, struct tb_capq **out)
{
    struct tb_capq *q;
    *out = NULL;
    if (n < 1 || n > TB_CAPQ_MAX || clk == NULL)
        return TB_EINVAL;
    q = calloc(1, sizeof(*q));
    if (q == NULL)
        return TB_ENOMEM;
    if (pthread_mutex_init(&q->mu, NULL) != 0) {
        free(q);
        return TB_ENOMEM;
    }
    q->clk = clk;
    q->n = n;
    *out = q;
    return 0;
}

void tb_capq_destroy(struct tb_capq *q)
{
    if (q == NULL)
        return;
    pthread_mutex_destroy(&q->mu);
    free(q);
}

int tb_capq_capacity(const struct tb_capq *q)
{
    return q->n;
}

int tb_capq_enter(struct tb_capq *q, struct tb_capq_slot *s)
{
    int held;
    pthread_mutex_lock(&q->mu);
    s->next = NULL;
    s->enter = q->clk->now(q->clk);
    held = q->head == NULL && q->held < q->n;
    if (held) {
        q->held++;
        s->grant = s->enter;
        s->state = TB_CAPQ_HELD;
    } else {
        s->grant = NAN;
        s->state = TB_CAPQ_WAITING;
        if (q->tail != NULL)
            q->tail->next = s;
        else
            q->head = s;
        q->tail = s;
        q->waiting++;
    }
    pthread_mutex_unlock(&q->mu);
    return held;
}

int tb_capq_held(struct tb_capq *q, const struct tb_capq_slot *s, double *grant)
{
    int held;
    pthread_mutex_lock(&q->mu);
    held = s->state == TB_CAPQ_HELD;
    if (held && grant != NULL)
        *grant = s->grant;
    pthread_mutex_unlock(&q->mu);
    return held;
}

/* Out of the queue (under the lock): O(waiting), only for a slot that
 * leaves before its grant (a canceled chunk), which is rare. */
static void unlink_slot(struct tb_capq *q, struct tb_capq_slot *s)
{
    struct tb_capq_slot *prev = NULL;
    for (struct tb_capq_slot *p = q->head; p != NULL; prev = p, p = p->next) {
        if (p != s)
            continue;
        if (prev != NULL)
            prev->next = p->next;
        else
            q->head = p->next;
        if (q->tail == p)
            q->tail = prev;
        q->waiting--;
        return;
    }
}

void tb_capq_leave(struct tb_capq *q, struct tb_capq_slot *s)
{
    pthread_mutex_lock(&q->mu);
    if (s->state == TB_CAPQ_WAITING) {
        unlink_slot(q, s);
    } else if (s->state == TB_CAPQ_HELD) {
        q->held--;
        if (q->head != NULL) {
            struct tb_capq_slot *h = q->head;
            q->head = h->next;
            if (q->head == NULL)
                q->tail = NULL;
            q->waiting--;
            h->next = NULL;
            h->grant = q->clk->now(q->clk);
            h->state = TB_CAPQ_HELD;
            q->held++;
        }
    }
    s->state = TB_CAPQ_IDLE;
    s->next = NULL;
    pthread_mutex_unlock(&q->mu);
}

void tb_capq_counts(struct tb_capq *q, int *held, int *waiting)
{
    pthread_mutex_lock(&q->mu);
    *held = q->held;
    *waiting = q->waiting;
    pthread_mutex_unlock(&q->mu);
}
