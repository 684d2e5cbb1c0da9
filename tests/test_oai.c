/*
 * test_oai.c - the OpenAI pair's rows of the dialect table (request
 * bodies, event JSON), error bodies in any dialect, and the redaction of
 * secrets in anything ttsbuf logs.
 */
#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"
#include "ttsbuf/api.h"
#include "ttsbuf/error.h"
#include "ttsbuf/http.h"
#include "ttsbuf/reader.h"

static void base_request(struct tb_api_request *q)
{
    tb_api_request_init(q);
    q->model = "m1";
    q->prompt = "Say \"hi\"";
}

static cJSON *body_of(const struct tb_api_request *q)
{
    char *s = NULL, err[128];
    cJSON *j;
    assert_int_equal(tb_api_request_body(q, &s, err, sizeof(err)), 0);
    j = cJSON_Parse(s);
    assert_non_null(j);
    free(s);
    return j;
}

static void request_chat(void **state)
{
    (void)state;
    struct tb_api_request q;
    cJSON *j, *m;
    base_request(&q);
    q.include_usage = 1;
    q.max_tokens = 300;
    q.temperature = 0.5;
    j = body_of(&q);
    assert_string_equal(cJSON_GetObjectItem(j, "model")->valuestring, "m1");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "stream")));
    assert_true(cJSON_IsTrue(
        cJSON_GetObjectItem(cJSON_GetObjectItem(j, "stream_options"), "include_usage")));
    assert_int_equal(cJSON_GetObjectItem(j, "max_tokens")->valueint, 300);
    assert_true(cJSON_GetObjectItem(j, "temperature")->valuedouble == 0.5);
    m = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "messages"), 0);
    assert_string_equal(cJSON_GetObjectItem(m, "role")->valuestring, "user");
    assert_string_equal(cJSON_GetObjectItem(m, "content")->valuestring, "Say \"hi\"");
    cJSON_Delete(j);
}

static void request_completions_and_defaults(void **state)
{
    (void)state;
    struct tb_api_request q;
    cJSON *j;
    base_request(&q);
    q.api = TB_API_COMPLETIONS;
    j = body_of(&q);
    assert_string_equal(cJSON_GetObjectItem(j, "prompt")->valuestring, "Say \"hi\"");
    assert_null(cJSON_GetObjectItem(j, "messages"));
    assert_null(cJSON_GetObjectItem(j, "stream_options"));
    assert_null(cJSON_GetObjectItem(j, "max_tokens"));
    assert_null(cJSON_GetObjectItem(j, "temperature"));
    cJSON_Delete(j);
}

static void request_messages_and_extra(void **state)
{
    (void)state;
    struct tb_api_request q;
    cJSON *j;
    base_request(&q);
    q.messages_json = "[{\"role\":\"system\",\"content\":\"be brief\"},"
                      "{\"role\":\"user\",\"content\":\"x\"}]";
    q.max_tokens = 10;
    q.extra_json = "{\"max_tokens\": 20, \"top_k\": 5, \"model\": \"other\"}";
    j = body_of(&q);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "messages")), 2);
    assert_int_equal(cJSON_GetObjectItem(j, "max_tokens")->valueint, 20); /* replaced */
    assert_int_equal(cJSON_GetObjectItem(j, "top_k")->valueint, 5);       /* added */
    assert_string_equal(cJSON_GetObjectItem(j, "model")->valuestring, "other");
    cJSON_Delete(j);
}

static void request_bad_json(void **state)
{
    (void)state;
    struct tb_api_request q;
    char *s = NULL, err[128];
    base_request(&q);
    q.messages_json = "{\"role\":\"user\"}";
    assert_int_equal(tb_api_request_body(&q, &s, err, sizeof(err)), TB_EINVAL);
    assert_non_null(strstr(err, "--messages: not a JSON array"));
    q.messages_json = "[{\"role\":";
    assert_int_equal(tb_api_request_body(&q, &s, err, sizeof(err)), TB_EINVAL);
    assert_non_null(strstr(err, "--messages: invalid JSON near byte"));
    q.messages_json = NULL;
    q.extra_json = "[1]";
    assert_int_equal(tb_api_request_body(&q, &s, err, sizeof(err)), TB_EINVAL);
    assert_non_null(strstr(err, "--body-json: not a JSON object"));
    q.extra_json = "{oops}";
    assert_int_equal(tb_api_request_body(&q, &s, err, sizeof(err)), TB_EINVAL);
    assert_non_null(strstr(err, "--body-json: invalid JSON"));
    assert_null(s);
}

static struct tb_api_parser *P;

static int setup(void **state)
{
    (void)state;
    return tb_api_parser_create(TB_API_CHAT, &P);
}

static int teardown(void **state)
{
    (void)state;
    tb_api_parser_destroy(P);
    return 0;
}

static void parse(const char *data, struct tb_api_delta *d)
{
    char err[128];
    int rc = tb_api_parse_event(P, NULL, 0, data, strlen(data), d, err, sizeof(err));
    if (rc != 0)
        fail_msg("parse '%s': %s", data, err);
}

static void event_content_and_role(void **state)
{
    (void)state;
    struct tb_api_delta d;
    parse("{\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},"
          "\"finish_reason\":null}]}",
          &d);
    assert_null(d.content); /* the empty role chunk is not a token */
    assert_string_equal(d.finish_reason, "");
    parse("{\"choices\":[{\"delta\":{\"content\":\" H\\u00e9llo\"}}]}", &d);
    assert_int_equal(d.content_len, 7);
    assert_memory_equal(d.content, " H\xc3\xa9llo", 7);
    assert_null(d.reasoning);
    assert_int_equal(d.usage_completion, -1);
    assert_false(d.done);
}

static void event_legacy_reasoning_tools(void **state)
{
    (void)state;
    struct tb_api_delta d;
    parse(
        "{\"object\":\"text_completion\",\"choices\":[{\"text\":\"abc\",\"finish_reason\":null}]}",
        &d);
    assert_int_equal(d.content_len, 3);
    parse("{\"choices\":[{\"delta\":{\"reasoning_content\":\"hmm\"}}]}", &d);
    assert_null(d.content);
    assert_int_equal(d.reasoning_len, 3);
    assert_memory_equal(d.reasoning, "hmm", 3);
    parse("{\"choices\":[{\"delta\":{\"reasoning\":\"think\",\"content\":\"ok\"}}]}", &d);
    assert_memory_equal(d.reasoning, "think", 5);
    assert_memory_equal(d.content, "ok", 2);
    parse("{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0},{\"index\":1}]}}]}", &d);
    assert_int_equal(d.tool_calls, 2);
    assert_null(d.content);
    parse("{\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}]}", &d);
    assert_string_equal(d.finish_reason, "length");
}

static void event_usage_done_error(void **state)
{
    (void)state;
    struct tb_api_delta d;
    parse("{\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":300,"
          "\"total_tokens\":312}}",
          &d);
    assert_int_equal(d.usage_completion, 300);
    assert_int_equal(d.usage_prompt, 12);
    assert_null(d.content);
    parse("[DONE]", &d);
    assert_true(d.done);
    parse("{\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\",\"code\":503}}", &d);
    assert_true(d.error);
    assert_string_equal(d.error_message, "overloaded");
    assert_string_equal(d.error_type, "server_error");
    assert_string_equal(d.error_code, "503");
    parse("{\"error\":\"plain words\"}", &d);
    assert_true(d.error);
    assert_string_equal(d.error_message, "plain words");
    parse("{\"error\":null,\"choices\":[{\"delta\":{\"content\":\"x\"}}]}", &d);
    assert_false(d.error);
    assert_int_equal(d.content_len, 1);
}

static void event_bad_input(void **state)
{
    (void)state;
    struct tb_api_delta d;
    char err[128];
    const char bad_utf8[] = "{\"choices\":[{\"delta\":{\"content\":\"a\xff\"}}]}";
    assert_int_equal(
        tb_api_parse_event(P, NULL, 0, "{\"choices\":[{\"delta\":", 21, &d, err, sizeof(err)),
        TB_EFORMAT);
    assert_non_null(strstr(err, "invalid JSON near byte"));
    assert_int_equal(tb_api_parse_event(P, NULL, 0, "[1,2]", 5, &d, err, sizeof(err)), TB_EFORMAT);
    assert_non_null(strstr(err, "not a JSON object"));
    assert_int_equal(
        tb_api_parse_event(P, NULL, 0, bad_utf8, strlen(bad_utf8), &d, err, sizeof(err)),
        TB_EFORMAT);
    assert_non_null(strstr(err, "not valid UTF-8"));
    /* Not NUL-terminated: only len bytes are read. */
    assert_int_equal(tb_api_parse_event(P, NULL, 0, "[DONE]xyz", 6, &d, err, sizeof(err)), 0);
    assert_true(d.done);
}

static void error_text_from_bodies(void **state)
{
    (void)state;
    char out[64];
    const char *json = "{\"error\":{\"message\":\"Rate limit reached\\nfor requests\","
                       "\"type\":\"rate_limit_exceeded\"}}";
    const char *html = "<html><head><TITLE>502 Bad Gateway</title></head><body>x</body>";
    tb_reader_error_text(json, strlen(json), out, sizeof(out));
    assert_string_equal(out, "Rate limit reached for requests");
    tb_reader_error_text(html, strlen(html), out, sizeof(out));
    assert_string_equal(out, "502 Bad Gateway");
    tb_reader_error_text("\n\n  upstream timed out  \nmore", 28, out, sizeof(out));
    assert_string_equal(out, "upstream timed out");
    tb_reader_error_text("", 0, out, sizeof(out));
    assert_string_equal(out, "");
    tb_reader_error_text(NULL, 0, out, sizeof(out));
    assert_string_equal(out, "");
    tb_reader_error_text("{\"message\":\"top-level\"}", 23, out, 8);
    assert_string_equal(out, "top-lev");
}

static void redact(const char *in, const char *want)
{
    char out[256];
    tb_http_redact(in, strlen(in), out, sizeof(out));
    if (strcmp(out, want) != 0)
        fail_msg("redact '%s': got '%s', want '%s'", in, out, want);
}

static void redaction(void **state)
{
    (void)state;
    redact("Authorization: Bearer sk-SECRET123", "Authorization: Bearer ***");
    redact("authorization:Bearer sk-SECRET123\r\nAccept: */*",
           "authorization:Bearer ***\r\nAccept: */*");
    redact("Proxy-Authorization: Basic dXNlcjpwYXNz", "Proxy-Authorization: Basic ***");
    redact("x-api-key: sk-ant-SECRET", "x-api-key: ***");
    redact("Api-Key: azure-SECRET", "Api-Key: ***");
    redact("POST /v1/chat?key=SECRET&alt=sse HTTP/1.1", "POST /v1/chat?key=***&alt=sse HTTP/1.1");
    redact("https://h/v1?api_key=S1&token=S2#frag", "https://h/v1?api_key=***&token=***#frag");
    redact("https://h/v1?monkey=banana", "https://h/v1?monkey=banana");
    redact("Content-Type: application/json", "Content-Type: application/json");
    {
        char small[12];
        tb_http_redact("Authorization: Bearer x", 23, small, sizeof(small));
        assert_int_equal(strlen(small), sizeof(small) - 1);
        assert_null(strstr(small, "x"));
    }
}

int tb_test_oai(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(request_chat),
        cmocka_unit_test(request_completions_and_defaults),
        cmocka_unit_test(request_messages_and_extra),
        cmocka_unit_test(request_bad_json),
        cmocka_unit_test_setup_teardown(event_content_and_role, setup, teardown),
        cmocka_unit_test_setup_teardown(event_legacy_reasoning_tools, setup, teardown),
        cmocka_unit_test_setup_teardown(event_usage_done_error, setup, teardown),
        cmocka_unit_test_setup_teardown(event_bad_input, setup, teardown),
        cmocka_unit_test(error_text_from_bodies),
        cmocka_unit_test(redaction),
    };
    return TB_RUN_GROUP("oai", tests);
}
