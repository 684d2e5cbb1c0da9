/*
 * bench_prompts.h - the prompt set of `ttsbuf bench`: a built-in varied
 * set, or a JSONL file (bench_prompts.c).  Request k of a run sends prompt
 * k mod n, so every shard sends the prompts one run would.
 *
 * Threads: any; ownership: the caller's (tb_bench_prompts_free).
 */
#ifndef TTSBUF_BENCH_PROMPTS_H
#define TTSBUF_BENCH_PROMPTS_H

#include <stddef.h>

#define TB_BENCH_PROMPTS_MAX 100000 /* lines of a --prompts file */
#define TB_BENCH_PROMPT_MAX (1u << 20)

/* A prompt: a user message, or a JSON array of chat messages. */
struct tb_bench_prompt {
    char *prompt;        /* owned; NULL when messages is set */
    char *messages_json; /* owned; NULL when prompt is set */
};

struct tb_bench_prompts {
    struct tb_bench_prompt *v;
    size_t n;
};

/* The built-in set: varied questions a voice assistant gets.  Returns 0 or
 * TB_ENOMEM.  Any thread. */
int tb_bench_prompts_builtin(struct tb_bench_prompts *p);

/*
 * tb_bench_prompts_load - a JSONL file, one object a line:
 * {"prompt": "..."} or {"messages": [...]}; blank lines skipped.  Returns
 * 0; TB_EFORMAT ("FILE:LINE: reason"), TB_ETOOBIG (a line over
 * TB_BENCH_PROMPT_MAX, more than TB_BENCH_PROMPTS_MAX lines), TB_EEMPTY,
 * TB_EIO, TB_ENOMEM; detail in err.
 */
int tb_bench_prompts_load(const char *path, struct tb_bench_prompts *p, char *err, size_t errlen);
void tb_bench_prompts_free(struct tb_bench_prompts *p); /* NULL is a no-op */

#endif
