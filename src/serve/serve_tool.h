/*
 * serve_tool.h - private to libttsbuf: the mock server's tool-call turns
 * (serve_tool.c).  A streamed completion request that offers tools
 * ("tools": a non-empty array) and carries no tool result yet is answered,
 * for a fraction tool_call_rate of such requests (drawn from the seed),
 * with a tool call instead of speech, in the request's dialect's
 * documented shape: OpenAI chat's tool_calls deltas (the id and name,
 * then the arguments in two fragments, finish_reason "tool_calls"),
 * Anthropic's tool_use block with input_json_delta fragments (stop_reason
 * "tool_use"), Ollama's message.tool_calls whole in one line.  The call
 * names the request's first tool; its arguments are {"query": WORD}, the
 * word drawn from the seed too.  A request that carries the tool's result
 * (a message of role "tool", or an Anthropic "tool_result" content block)
 * is answered with speech, as any other.  serve_json.c reads what a
 * request says of tools (struct tb_serve_json_req's tools, tool_result,
 * tool_name).
 */
#ifndef TTSBUF_SERVE_TOOL_H
#define TTSBUF_SERVE_TOOL_H

#include <stdint.h>

#include "serve_priv.h"

/* Whether c's request is answered with a tool call; *draw: the draw that
 * picks its arguments.  Any loop. */
int tb_serve_tool_drawn(struct tb_serve *srv, const struct tb_serve_conn *c, uint64_t *draw);

/* Sends the tool-call stream whole (head, events, end) and finishes c.
 * Returns as tb_serve_finish (0, or -1 when c was closed). */
int tb_serve_tool_stream(struct tb_serve_loop *s, struct tb_serve_conn *c, uint64_t draw);

#endif
