/* version.h - ttsbuf's version, bumped by hand on each release. */
#ifndef TTSBUF_VERSION_H
#define TTSBUF_VERSION_H

#define TB_VERSION "0.1.0"

/* The version of the library linked (TB_VERSION when it was built), which
 * a program built against another header can tell from its own.  Any
 * thread. */
const char *tb_version(void);

#endif
