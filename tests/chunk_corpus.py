#!/usr/bin/python3
"""Conformance corpora for the framework chunking profiles.

  chunk_corpus.py gen        writes tests/data/chunk/corpus.jsonl (200 token
                             streams of prose, 2-6 code points a token) and
                             mixed.jsonl (400 streams of words, abbreviations
                             and punctuation in random order, 1-7 a token)
                             and unicode.jsonl (300 streams of accented,
                             Greek and Cyrillic words, ligatures and Unicode
                             spaces, 1-6 a token); all deterministic
  chunk_corpus.py expect openai-agents|livekit CHECKOUT
  chunk_corpus.py expect pipecat CHECKOUT NLTK_CHECKOUT PARAMS_DIR
                             runs the framework's own text-chunking code from
                             a checkout of its repository over the corpora
                             and writes expected-PROFILE.jsonl,
                             expected-mixed-PROFILE.jsonl and
                             expected-unicode-PROFILE.jsonl

The checkouts used for the committed files (read with `git show`, never
copied into this repository):
  openai-agents  openai/openai-agents-python 7f7a44f8dc0650296bd5ab6c745c9bcbaa6ac3b7
                 src/agents/voice/utils.py (get_sentence_based_splitter) as
                 called by src/agents/voice/result.py (_add_text after every
                 text delta, _turn_done flushes the rest)
  livekit        livekit/agents da6af86ac640a3bc54585764e64321d7048c1c16
                 (livekit-agents 1.7.0) tokenize/_basic_sent.py and
                 tokenize/token_stream.py (BufferedSentenceStream with the
                 basic SentenceTokenizer defaults: min_sentence_len 20,
                 stream_context_len 10)
  pipecat        pipecat-ai/pipecat acead0507d7de44e216d24533964106ca1d1d044
                 (v1.7.0-771) src/pipecat/utils/string.py
                 (match_endofsentence) and
                 src/pipecat/utils/text/simple_text_aggregator.py, with
                 NLTK's nltk/tokenize/punkt.py from nltk/nltk
                 f2a92bd7e360e39a4439e4d97540fd68f2721451 (3.8.1, the newest
                 snapshot at hand; Pipecat asks for nltk >= 3.10, whose
                 punkt.py was not run here) and PARAMS_DIR =
                 data/punkt_tab/english

CHECKOUT is a directory holding the repository's files (a worktree, or
`git archive` of a mirror).  Each expected line is {"id", "chunks": [{"text",
"event"}]}: the text the framework hands to its TTS and the index of the
token (content event, from 0) whose arrival released it; a chunk flushed at
the end of the stream carries the last token's index.  livekit chunks also
carry "span", the stream text the chunk consumed, which differs from the
text sent where the splitter drops a period ("Inc. He").  Run with the
system Python 3; nothing outside the standard library is needed.
"""
import importlib.util
import json
import os
import random
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data", "chunk")

SENTENCES = [
    "Mr. Smith arrived at the station late.",
    "Dr. Lee will see you at 9 a.m. tomorrow.",
    "We met on St. James Street last week.",
    "The book is by J. R. R. Tolkien, of course.",
    "OK. Let me check that for you.",
    "Use a short list, e.g. eggs, milk and bread.",
    "The U.S.A. has fifty states.",
    "Pi is about 3.14159 and e is about 2.718.",
    "It costs $2.50 per item, or 4.5 euros.",
    "Wait... what did you just say?",
    "Well\u2026 that is one way to see it.",
    "He said \"Go home.\" Then he left.",
    "She answered 'Yes.' and smiled at him.",
    "(See the manual for details.) It is short.",
    "Are you sure?! Yes, I am.",
    "Really? No way! That is amazing.",
    "Here is the plan:\n1. Open the box.\n2. Take out the radio.\n3. Plug it in.",
    "Steps:\n- first item\n- second item",
    "Great job! \U0001F389 Let us keep going.",
    "I love pizza \U0001F355. Do you?",
    "\u4f60\u597d\u3002\u6211\u5f88\u597d\uff01\u8c22\u8c22\uff1f\u518d\u89c1\u3002",
    "\u4eca\u5929\u5929\u6c14\u5f88\u597d\u3002\u6211\u4eec\u53bb\u516c\u56ed\u5427\uff01",
    "Visit https://example.com/docs for more. Then come back.",
    "Our site is example.org and it works.",
    "The short answer is yes.",
    "Thanks for waiting; I have the results now.",
    "According to the manual, the reset button is on the back panel, just below the power socket.",
    "Sure.",
    "No.",
    "It was late. He was tired. They went home.",
    "The meeting ends at 5 p.m. sharp.",
    "Apple Inc. makes phones. But they also make laptops.",
    "Version 2.0 is out. It fixes 3 bugs.",
    "\"Stop!\" she shouted. Nobody moved.",
    "What time is it? It's 10.30 now.",
    "Call me at ext. 42 later.",
    "Prof. Brown and Capt. Hook met.",
    "The temperature dropped to -3.5 degrees overnight.",
]

SEPS = [" ", " ", " ", " ", "\n", "\n\n", "  "]


def gen():
    rnd = random.Random(18)
    out = []
    for i in range(200):
        n = rnd.randint(2, 7)
        text = ""
        for k in range(n):
            if k > 0:
                text += rnd.choice(SEPS)
            text += rnd.choice(SENTENCES)
        if rnd.random() < 0.2:
            text += " "
        toks, j = [], 0
        while j < len(text):
            w = rnd.randint(2, 6)
            toks.append(text[j:j + w])
            j += w
        out.append({"id": i, "tokens": toks})
    with open(os.path.join(DATA, "corpus.jsonl"), "w", encoding="utf-8") as f:
        for o in out:
            f.write(json.dumps(o, ensure_ascii=False) + "\n")


MIXED_WORDS = [
    "the", "cat", "Mr.", "Dr.", "St.", "Inc.", "Jr.", "e.g.", "i.e.", "a.m.", "p.m.", "U.S.",
    "J.", "K.", "OK.", "No.", "1.", "2.", "3.5", "$2.50", "10.30", "example.com",
    "www.site.org/x", "He", "She", "It", "But", "This", "However", "They", "I", "We", "said",
    "went", "home", "Apple", "Paris", "ok", "yes", "no", "etc.", "vs.", "Fig.", "Ph.D.",
    "A.B.C.", "x.y", "Co.", "Ltd.", "Prof.", "Capt.", "sept.", "jan.", "Calif.",
    "\u4f60\u597d", "\U0001F600",
]
MIXED_PUNCT = [
    ".", "!", "?", "...", "\u2026", "?!", ".\"", ".'", ".)", "!\"", ";", ":", ",", "\u3002",
    "\uff01", "\uff1f", " --", "\"", "(", ")", "",
]
MIXED_SEPS = [" ", " ", " ", "  ", "\n", "\n\n", "\t", ""]


def gen_mixed():
    """400 streams of words, abbreviations and punctuation in random order
    (1-7 code points a token): the corners prose rarely reaches."""
    rnd = random.Random(7)
    out = []
    for i in range(400):
        text = ""
        for _ in range(rnd.randint(5, 60)):
            text += rnd.choice(MIXED_WORDS)
            if rnd.random() < 0.35:
                text += rnd.choice(MIXED_PUNCT)
            text += rnd.choice(MIXED_SEPS)
        toks, j = [], 0
        while j < len(text):
            w = rnd.randint(1, 7)
            toks.append(text[j:j + w])
            j += w
        out.append({"id": i, "tokens": toks})
    with open(os.path.join(DATA, "mixed.jsonl"), "w", encoding="utf-8") as f:
        for o in out:
            f.write(json.dumps(o, ensure_ascii=False) + "\n")


UNICODE_WORDS = [
    "\u00d6lfeld", "\u00fcber", "\u00c9cole", "na\u00efve", "\u03a3\u03c9\u03ba\u03c1\u03ac\u03c4\u03b7\u03c2",
    "\u041c\u043e\u0441\u043a\u0432\u0430", "\u043c\u0438\u0440", "\u0130stanbul", "\u01c5emal",
    "\ufb01ne", "Stra\u00dfe", "\u0391\u0392\u0393.", "\u00c9.", "\u00e9.", "\u00df.", "\u03a9.",
    "no.", "fig.", "Sr.", "Co.", "Dr.", "(a)", "[b]", "{c}", "x--y", "1.5", "-3", "A.", "b.",
    "3.", "iv.", "II.", "e.g.", "p.m.", "...", "\u2026", "?", "!", "a", "the", "They", "Je",
    "\u00c9l",
]
UNICODE_PUNCT = [".", "!", "?", "...", ".\"", ".)", "!)", "?'", ";", ":", ",", "\u2014", "--", ""]
UNICODE_SEPS = [" ", " ", "  ", "\n", "\n\n", "\t", "\u00a0", "\u3000", ""]


def gen_unicode():
    """300 streams of accented, Greek and Cyrillic words, ligatures,
    initials and Unicode spaces (1-6 code points a token)."""
    rnd = random.Random(11)
    out = []
    for i in range(300):
        text = ""
        for _ in range(rnd.randint(5, 50)):
            text += rnd.choice(UNICODE_WORDS)
            if rnd.random() < 0.4:
                text += rnd.choice(UNICODE_PUNCT)
            text += rnd.choice(UNICODE_SEPS)
        toks, j = [], 0
        while j < len(text):
            w = rnd.randint(1, 6)
            toks.append(text[j:j + w])
            j += w
        out.append({"id": i, "tokens": toks})
    with open(os.path.join(DATA, "unicode.jsonl"), "w", encoding="utf-8") as f:
        for o in out:
            f.write(json.dumps(o, ensure_ascii=False) + "\n")


def load(path, name, pkg=None):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    if pkg is not None:
        m.__package__ = pkg
    sys.modules[name] = m
    spec.loader.exec_module(m)
    return m


def run_openai(root, streams):
    utils = load(os.path.join(root, "src/agents/voice/utils.py"), "oai_voice_utils")
    res = []
    for st in streams:
        split = utils.get_sentence_based_splitter()
        buf, chunks = "", []
        # result.py _add_text: append the delta, split, send what comes out
        for k, tok in enumerate(st["tokens"]):
            buf += tok
            out, buf = split(buf)
            if out:
                chunks.append({"text": out, "event": k})
        # result.py _turn_done: the rest, if any
        if buf:
            chunks.append({"text": buf, "event": len(st["tokens"]) - 1})
        res.append({"id": st["id"], "chunks": chunks})
    return res


def run_livekit(root, streams):
    tk = os.path.join(root, "livekit-agents/livekit/agents/tokenize")
    # Stubs for the package around token_stream.py: a channel that keeps
    # what is sent, and the two base classes it names.
    pkg = types.ModuleType("lk")
    pkg.__path__ = []
    sys.modules["lk"] = pkg
    utils = types.ModuleType("lk.utils")

    class Chan:
        def __init__(self):
            self.items, self.closed = [], False

        def send_nowait(self, x):
            self.items.append(x)

        def close(self):
            self.closed = True

        def __class_getitem__(cls, item):
            return cls

    utils.aio = types.SimpleNamespace(Chan=Chan)
    utils.shortuuid = lambda *a: "seg"
    sys.modules["lk.utils"] = utils
    tpkg = types.ModuleType("lk.tokenize")
    tpkg.__path__ = []
    sys.modules["lk.tokenize"] = tpkg
    tokenizer = types.ModuleType("lk.tokenize.tokenizer")

    class TokenData:
        def __init__(self, token, segment_id=""):
            self.token = token

    tokenizer.TokenData = TokenData
    tokenizer.SentenceStream = type("SentenceStream", (), {})
    tokenizer.WordStream = type("WordStream", (), {})
    sys.modules["lk.tokenize.tokenizer"] = tokenizer
    sent = load(os.path.join(tk, "_basic_sent.py"), "lk.tokenize._basic_sent", "lk.tokenize")
    ts = load(os.path.join(tk, "token_stream.py"), "lk.tokenize.token_stream", "lk.tokenize")
    import functools
    res = []
    for st in streams:
        # basic.SentenceTokenizer().stream() with its defaults
        s = ts.BufferedSentenceStream(
            tokenizer=functools.partial(sent.split_sentences, min_sentence_len=20,
                                        retain_format=False),
            min_token_len=20, min_ctx_len=10)
        # Where each sent sentence ends in the stream: push_text sends
        # tokens[0] of the last split, then slices its buffer at tok[2].
        last = []
        split = s._tokenize_fnc

        def tokenize(text, split=split, last=last):
            r = split(text)
            last[:] = r
            return r

        s._tokenize_fnc = tokenize
        pushed = [""]
        ends = []
        s._event_ch.send_nowait = (
            lambda x, s=s, ends=ends, last=last, pushed=pushed, ch=s._event_ch:
            (ends.append(len(pushed[0]) - len(s._in_buf) + (last[0][2] if last else len(s._in_buf))),
             ch.items.append(x)))
        chunks = []
        text = ""
        for k, tok in enumerate(st["tokens"]):
            text += tok
            pushed[0] = text
            s.push_text(tok)
            while len(chunks) < len(s._event_ch.items):
                chunks.append({"text": s._event_ch.items[len(chunks)].token, "event": k})
        last.clear()
        s.end_input()
        while len(chunks) < len(s._event_ch.items):
            chunks.append({"text": s._event_ch.items[len(chunks)].token,
                           "event": len(st["tokens"]) - 1})
        # "span": the stream's text each chunk consumed (the text sent can
        # differ: the splitter drops the period of "Inc. He")
        prev = 0
        for c, end in zip(chunks, ends):
            c["span"] = text[prev:end]
            prev = end
        res.append({"id": st["id"], "chunks": chunks})
    return res


def run_pipecat(root, streams, nltk_root, params_dir):
    import asyncio
    # punkt.py with the two NLTK names it imports stubbed (training only)
    for name in ("nltk", "nltk.probability", "nltk.tokenize", "nltk.tokenize.api"):
        m = types.ModuleType(name)
        m.__path__ = []
        sys.modules[name] = m
    sys.modules["nltk.probability"].FreqDist = dict
    sys.modules["nltk.tokenize.api"].TokenizerI = object
    punkt = load(os.path.join(nltk_root, "nltk/tokenize/punkt.py"), "nltk.tokenize.punkt",
                 "nltk.tokenize")
    params = punkt.PunktParameters()
    with open(os.path.join(params_dir, "abbrev_types.txt"), encoding="utf-8") as f:
        params.abbrev_types = set(line.rstrip("\n") for line in f if line.rstrip("\n"))
    with open(os.path.join(params_dir, "collocations.tab"), encoding="utf-8") as f:
        params.collocations = set(tuple(line.rstrip("\n").split("\t")) for line in f
                                  if line.strip())
    with open(os.path.join(params_dir, "sent_starters.txt"), encoding="utf-8") as f:
        params.sent_starters = set(line.strip() for line in f if line.strip())
    with open(os.path.join(params_dir, "ortho_context.tab"), encoding="utf-8") as f:
        for line in f:
            if line.strip():
                typ, n = line.rstrip("\n").split("\t")
                params.ortho_context[typ] = int(n)
    tok = punkt.PunktSentenceTokenizer(params)
    # pipecat.utils.string and the aggregators, with loguru stubbed and
    # the NLTK loader pointed at the tokenizer above
    for name in ("pipecat", "pipecat.utils", "pipecat.utils.text"):
        m = types.ModuleType(name)
        m.__path__ = []
        sys.modules[name] = m
    loguru = types.ModuleType("loguru")
    loguru.logger = types.SimpleNamespace(error=print, debug=print, warning=print)
    sys.modules["loguru"] = loguru
    src = os.path.join(root, "src/pipecat/utils")
    string = load(os.path.join(src, "string.py"), "pipecat.utils.string", "pipecat.utils")
    string._sent_tokenizer = lambda: tok.tokenize
    load(os.path.join(src, "text/base_text_aggregator.py"),
         "pipecat.utils.text.base_text_aggregator", "pipecat.utils.text")
    agg_mod = load(os.path.join(src, "text/simple_text_aggregator.py"),
                   "pipecat.utils.text.simple_text_aggregator", "pipecat.utils.text")

    async def one(st):
        agg = agg_mod.SimpleTextAggregator()
        chunks = []
        for k, t in enumerate(st["tokens"]):
            async for a in agg.aggregate(t):
                chunks.append({"text": a.text, "event": k})
        a = await agg.flush()
        if a is not None:
            chunks.append({"text": a.text, "event": len(st["tokens"]) - 1})
        return {"id": st["id"], "chunks": chunks}

    return [asyncio.run(one(st)) for st in streams]


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "gen":
        gen()
        gen_mixed()
        gen_unicode()
        return
    if len(sys.argv) < 4 or sys.argv[1] != "expect":
        sys.exit(__doc__)
    fw, root = sys.argv[2], sys.argv[3]
    if fw == "pipecat" and len(sys.argv) != 6:
        sys.exit(__doc__)
    for corpus, prefix in (("corpus.jsonl", "expected"), ("mixed.jsonl", "expected-mixed"),
                           ("unicode.jsonl", "expected-unicode")):
        with open(os.path.join(DATA, corpus), encoding="utf-8") as f:
            streams = [json.loads(line) for line in f]
        if fw == "pipecat":
            res = run_pipecat(root, streams, sys.argv[4], sys.argv[5])
        else:
            res = {"openai-agents": run_openai, "livekit": run_livekit}[fw](root, streams)
        with open(os.path.join(DATA, "%s-%s.jsonl" % (prefix, fw)), "w", encoding="utf-8") as f:
            for o in res:
                f.write(json.dumps(o, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
