/*
 * voice.c - how long a chunk of text takes to speak (see voice.h): the
 * name of the durations a run uses.  The rate model itself is inline in
 * voice.h: the playout calls it once per chunk.
 */
#include "ttsbuf/voice.h"

#include <stddef.h>

const char *tb_voice_model(const struct tb_voice *v)
{
    return v == NULL || v->model == NULL ? "rate" : v->model;
}
