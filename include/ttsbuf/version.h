/* version.h - ttsbuf's version, bumped by hand on each release. */
#ifndef TTSBUF_VERSION_H
#define TTSBUF_VERSION_H

#define TB_VERSION "0.1.0"

#endif
