/*
 * api.c - using libttsbuf from C: simulate a stream you built yourself.
 *
 *   cc -Iinclude examples/api.c build/libttsbuf.a -lcjson -lm -pthread
 *   (after make install: cc examples/api.c -lttsbuf -lcjson -lm -pthread)
 */
#include <stdio.h>
#include <string.h>

#include "ttsbuf.h"

int main(void)
{
    static const struct {
        double t;
        const char *text;
    } events[] = {
        {0.40, "Sure"}, {0.45, ","}, {0.52, " I"}, {0.60, " can"}, {0.66, " help"},
        {0.71, "."},    {2.90, " It"}, {2.95, " will"}, {3.00, " take"}, {3.04, " a"},
        {3.10, " minute"}, {3.16, "."},
    };
    struct tb_stream s;
    struct tb_sim_opts o;
    struct tb_sim_result r;
    struct tb_clock clk;
    char err[256];
    int rc;

    tb_stream_init(&s);
    for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
        tb_stream_append(&s, events[i].t, events[i].text, strlen(events[i].text), 1,
                         TB_KIND_CONTENT);
    tb_sim_opts_default(&o); /* sentence chunks, 150 wpm, no pre-roll */
    tb_clock_virtual_init(&clk);
    rc = tb_sim_run(&s, &o, &clk, NULL, NULL, &r, err, sizeof(err));
    if (rc != 0) {
        fprintf(stderr, "api: %s\n", err);
        return 1;
    }
    printf("first audio %.2f s, %u underruns (%.2f s silent), min TPS %.1f\n", r.play.ttfa,
           r.play.underruns, r.play.gap_total, r.play.min_tps);
    tb_stream_free(&s);
    return 0;
}
