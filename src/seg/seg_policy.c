/*
 * seg_policy.c - the table of chunking policies (see seg.h for the rules):
 * each policy is a row, its name (--chunk), its one-line rule (--help, the
 * man page) and its feed function, in seg_rules.c (token, sentence,
 * clause, fixed40, elevenlabs: ttsbuf's rules and the documented schedule)
 * or in seg_frameworks.c (pipecat, livekit, openai-agents,
 * elevenlabs-sdk: the frameworks' own splitters); cartesia and idle add
 * a timer, kept here (tb_seg_feed_at, tb_seg_tick in seg.c).  Adding a
 * policy is a row, its feed, and an entry in enum tb_chunk_policy.
 */
#include <math.h>
#include <string.h>

#include "seg_frameworks.h"
#include "seg_priv.h"
#include "seg_rules.h"
#include "ttsbuf/error.h"
#include "ttsbuf/seg.h"

static const struct policy {
    const char *name;
    const char *about;
    tb_seg_feed_fn *feed;
} policies[TB_CHUNK__COUNT] = {
    [TB_CHUNK_TOKEN] = {"token", "every event is a chunk", tb_seg_feed_token},
    [TB_CHUNK_SENTENCE] = {"sentence",
                           "ends after an event once the text ends in . ! ? or an ellipsis "
                           "(ignoring trailing spaces, quotes, brackets) or the event holds a "
                           "newline; at least --min-chars code points",
                           tb_seg_feed_sentence},
    [TB_CHUNK_CLAUSE] = {"clause", "as sentence, plus , ; : and em dash", tb_seg_feed_clause},
    [TB_CHUNK_PIPECAT] = {"pipecat",
                          "Pipecat 1.x SimpleTextAggregator (checked against 1.7.0): after . ! ? ; "
                          "... the next non-space character makes it ask NLTK's Punkt (English "
                          "parameters) where the first sentence ends; no cut at abbreviations",
                          tb_seg_feed_pipecat},
    [TB_CHUNK_LIVEKIT] = {"livekit",
                          "LiveKit Agents 1.x basic sentence tokenizer and its buffered stream "
                          "(livekit-agents 1.7.0; not the blingfire default of 1.2+): a sentence "
                          "(>= 20 code points, joined to the next when shorter) goes out when the "
                          "split shows another one after it",
                          tb_seg_feed_livekit},
    [TB_CHUNK_OPENAI_AGENTS] =
        {"openai-agents",
         "OpenAI Agents SDK voice pipeline (openai-agents-python, "
         "get_sentence_based_splitter(20) after every text delta): everything up "
         "to the last . ! ? that whitespace and a non-space follow, once it holds "
         ">= 20 code points",
         tb_seg_feed_openai},
    [TB_CHUNK_FIXED40] = {"fixed40",
                          "a 40-code-point buffer cut after its last whitespace (or whole, when "
                          "there is none)",
                          tb_seg_feed_fixed40},
    [TB_CHUNK_ELEVENLABS] =
        {"elevenlabs",
         "ElevenLabs chunk_length_schedule 120,160,250,290 as documented (the "
         "server is closed): chunk i closes at the event that brings the buffer "
         "to schedule[min(i,3)] code points, counted from the previous chunk",
         tb_seg_feed_elevenlabs},
    [TB_CHUNK_ELEVENLABS_SDK] =
        {"elevenlabs-sdk",
         "ElevenLabs Python SDK convert_realtime: its text_chunker re-cuts the "
         "stream at word and punctuation boundaries, and the schedule it sets, "
         "[50], closes a chunk once 50 characters have been sent",
         tb_seg_feed_elevenlabs_sdk},
    [TB_CHUNK_CARTESIA] =
        {"cartesia",
         "Cartesia managed buffering (max_buffer_delay_ms, documented default 3000 ms): "
         "the text waits until a sentence has ended and more text comes, or until "
         "--max-buffer-delay has passed since the chunk's first event",
         tb_seg_feed_cartesia},
    [TB_CHUNK_IDLE] = {"idle",
                       "a flush on inactivity: as sentence, plus a chunk closes once "
                       "--idle-flush seconds pass with no new event (default 0.5)",
                       tb_seg_feed_sentence},
};

int tb_seg_policy_parse(const char *name, enum tb_chunk_policy *out)
{
    for (int i = 0; i < TB_CHUNK__COUNT; i++) {
        if (strcmp(name, policies[i].name) == 0) {
            *out = (enum tb_chunk_policy)i;
            return 0;
        }
    }
    return TB_EINVAL;
}

const char *tb_seg_policy_name(enum tb_chunk_policy p)
{
    return (unsigned)p < TB_CHUNK__COUNT ? policies[p].name : "?";
}

const char *tb_seg_policy_about(enum tb_chunk_policy p)
{
    return (unsigned)p < TB_CHUNK__COUNT ? policies[p].about : "?";
}

int tb_seg_policy_timed(enum tb_chunk_policy p)
{
    return p == TB_CHUNK_CARTESIA || p == TB_CHUNK_IDLE;
}

void tb_seg_feed(struct tb_seg *s, const char *text, size_t len, tb_chunk_fn fn, void *ud)
{
    if (s->timed) {
        tb_seg_feed_at(s, NAN, text, len, fn, ud);
        return;
    }
    policies[s->o.policy].feed(s, (const unsigned char *)text, len, fn, ud);
    s->event++;
}

/* A time-based policy: the timer first, then the text; the chunk left open
 * is dated by the event that opened it (cartesia) and the last one fed
 * (idle).  Any other policy: the text alone, as tb_seg_feed, with no
 * timer to keep (the default chunking pays nothing for time). */
void tb_seg_feed_at(struct tb_seg *s, double t, const char *text, size_t len, tb_chunk_fn fn,
                    void *ud)
{
    uint32_t before;
    int was_empty;
    if (!s->timed) {
        policies[s->o.policy].feed(s, (const unsigned char *)text, len, fn, ud);
        s->event++;
        return;
    }
    tb_seg_tick(s, t, fn, ud);
    before = s->nchunks;
    was_empty = s->gcps == s->start_cps;
    s->now = t;
    policies[s->o.policy].feed(s, (const unsigned char *)text, len, fn, ud);
    if (s->gcps > s->start_cps && (was_empty || s->nchunks != before)) {
        s->t_open = t;
        s->ev_open = s->event;
    }
    s->t_last = t;
    s->event++;
}
