/*
 * import_reader.h - private to the import module: a row of the table of formats
 * (import_format.c), each defined in its reader's own file.  Types and
 * the rows only.
 */
#ifndef TTSBUF_IMPORT_READER_H
#define TTSBUF_IMPORT_READER_H

#include <stddef.h>

#include "import_json.h"
#include "ttsbuf/import.h"

struct tb_import_reader {
    /* One record a line: a file is read a line at a time, never whole. */
    int jsonl;
    /* Reads in (a buffer, or with jsonl a stream read a line at a time)
     * into out, name in messages.  Returns 0, or a TB_E* code with the
     * detail in err ("NAME:LINE: ..."). */
    int (*read)(const struct tb_import_in *in, const char *name, struct tb_import *out, char *err,
                size_t errlen);
};

extern const struct tb_import_reader tb_import_reader_vllm;       /* import_vllm.c */
extern const struct tb_import_reader tb_import_reader_sglang;     /* import_vllm.c */
extern const struct tb_import_reader tb_import_reader_genai;      /* import_genai.c */
extern const struct tb_import_reader tb_import_reader_aiperf_raw; /* import_aiperf.c */
extern const struct tb_import_reader tb_import_reader_aiperf;     /* import_aiperf.c */

#endif
