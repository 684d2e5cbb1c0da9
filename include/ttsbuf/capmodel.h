/*
 * capmodel.h - the shared TTS capacity in a modelled run (capmodel.c):
 * many streams, each with its own arrival on the run's clock and its own
 * TTS stage (playout.h: chunks sent in order, at most N_i of its own in
 * flight), sharing at most C syntheses in flight across all of them, the
 * others queued first come, first served.
 *
 * For chunk j of stream i (times on the stream's clock, 0 = its arrival
 * A_i on the run's clock):
 *   ready  r_j = max(c_j, b_{j-1}, d_{j-N_i})   the stream's own rule
 *          (no b term for j = 1, no d term for j <= N_i or N_i = 0)
 *   begin  b_j: the chunks of every stream take the C slots in the order
 *          of A_i + r_j, ties to the lower stream index (the stream given
 *          first); b_j = r_j when a slot is free then, else the moment
 *          one frees (a slot frees at A + d of the chunk that held it)
 *   done   d_j = b_j + svc_j   (svc_j = L_j (+K) + R_j D_j: playout.h)
 *   wait   b_j - r_j, the capacity's queueing delay
 * A blank chunk (no request) takes no slot: b_j = d_j = r_j, wait NAN.
 * C = 0 is unlimited (every wait 0).  Every comparison is made on the
 * run's clock (A_i + ...), and the stream's times are those less A_i,
 * with b_j = r_j exactly when the wait is 0.
 *
 * Cost: O(m log(n + C)) for m chunks of n streams; allocates O(n + C).
 * Plain values; any thread (no shared state).
 */
#ifndef TTSBUF_CAPMODEL_H
#define TTSBUF_CAPMODEL_H

#include <stddef.h>

struct tb_capmodel_chunk {
    double c;                        /* in: its close */
    double svc;                      /* in: its synthesis, first byte to last, >= 0 */
    int blank;                       /* in: no request */
    double ready, begin, done, wait; /* out (above) */
};

struct tb_capmodel_stream {
    double arrival;  /* in: A_i, the run's clock */
    int concurrency; /* in: N_i, 0 unlimited */
    struct tb_capmodel_chunk *v;
    size_t n;
};

/*
 * tb_capmodel_run - fills every chunk's out fields.  Returns 0, TB_EINVAL
 * (capacity < 0, a concurrency < 0, a time not finite, closes going
 * backwards, a negative svc) or TB_ENOMEM.
 */
int tb_capmodel_run(struct tb_capmodel_stream *s, size_t ns, int capacity);

#endif
