/*
 * pcmhold.c - pieces of PCM held until the start (pcmhold.h).
 */
#include "pcmhold.h"

#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "ttsbuf/error.h"

struct tb_pcmhold_piece {
    double c, due;
    size_t off, n;
};

int tb_pcmhold_add(struct tb_pcmhold *h, double c, double due, const int16_t *pcm, size_t n)
{
    if (h->n == h->cap) {
        struct tb_pcmhold_piece *nv = tb_grow(h->v, &h->cap, sizeof(*nv), 64);
        if (nv == NULL)
            return TB_ENOMEM;
        h->v = nv;
    }
    while (h->pcm_n + n > h->pcm_cap) {
        int16_t *np = tb_grow(h->pcm, &h->pcm_cap, sizeof(*np), (size_t)1 << 15);
        if (np == NULL)
            return TB_ENOMEM;
        h->pcm = np;
    }
    if (n > 0)
        memcpy(h->pcm + h->pcm_n, pcm, n * sizeof(*pcm));
    h->v[h->n++] = (struct tb_pcmhold_piece){c, due, h->pcm_n, n};
    h->pcm_n += n;
    return 0;
}

size_t tb_pcmhold_frames(const struct tb_pcmhold *h)
{
    return h->pcm_n;
}

int tb_pcmhold_release(struct tb_pcmhold *h, double s1, tb_pcmhold_fn fn, void *ud)
{
    int rc = 0;
    for (size_t i = 0; i < h->n && rc == 0; i++) {
        const struct tb_pcmhold_piece *p = &h->v[i];
        rc = fn(ud, p->c, p->due > s1 ? p->due : s1, h->pcm + p->off, p->n);
    }
    tb_pcmhold_free(h);
    return rc;
}

void tb_pcmhold_free(struct tb_pcmhold *h)
{
    free(h->v);
    free(h->pcm);
    *h = (struct tb_pcmhold){0};
}
