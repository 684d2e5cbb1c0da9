/*
 * api_toolmsg.h - private to libttsbuf: a chat body's tools and tool
 * exchange, given in OpenAI's shape (api.h, tools_json), made a dialect's
 * own in place (api_toolmsg.c).  cJSON stays in the api/ files.
 */
#ifndef TTSBUF_API_TOOLMSG_H
#define TTSBUF_API_TOOLMSG_H

#include <cJSON.h>

/* Anthropic's: tools {name, description, input_schema}, an assistant
 * message's tool_calls as tool_use blocks {id, name, input}, a run of
 * "tool" messages as one user message of tool_result blocks
 * {tool_use_id, content}.  0 or TB_ENOMEM.  Any thread. */
int tb_api_toolmsg_anthropic(cJSON *root);

/* Ollama's: each tool call's arguments an object, without id and type;
 * a "tool" message names its tool (tool_name, the call before it) instead
 * of a call id.  0 or TB_ENOMEM.  Any thread. */
int tb_api_toolmsg_ollama(cJSON *root);

#endif
