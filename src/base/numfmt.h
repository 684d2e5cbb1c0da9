/*
 * numfmt.h - private to libttsbuf: doubles printed so they read back
 * bit-identical (traces and synth specs must replay exactly).
 */
#ifndef TTSBUF_NUMFMT_H
#define TTSBUF_NUMFMT_H

#include <stddef.h>

/*
 * tb_numfmt_double - writes the shortest %g form of d, from 6 digits up to
 * 17, that strtod reads back as exactly d (17 always does; at 6 digits this
 * is plain %g).  d must be finite; buf should hold 32 bytes.  Returns buf.
 * The library never calls setlocale, so the decimal point is '.'.
 * Any thread.
 */
const char *tb_numfmt_double(char *buf, size_t len, double d);

#endif
