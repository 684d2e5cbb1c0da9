# ttsbuf - is this LLM provider fast enough to feed a speech engine?
#
#   make            build ./ttsbuf (installs missing Debian packages first)
#   make demo       build and run the simulation on the embedded default
#   make test       build and run the whole test suite
#   make asan       the suite under AddressSanitizer + UndefinedBehaviorSanitizer
#   make tsan       the multi-threaded tests under ThreadSanitizer
#   make bench      benchmarks (prints figures; no pass/fail; TB_BENCH_ONLY=speech,...)
#   make fmt        clang-format every source file
#   make install    PREFIX=/usr/local DESTDIR=
#   make clean
#   make test DEBUGGER=valgrind   run the suite under a tool

CC      ?= cc
PREFIX  ?= /usr/local
DESTDIR ?=
BUILD   ?= build
DEBUGGER ?=

PKGS     := libcjson libcurl espeak-ng
# PortAudio: the speech sink and the audio tests (tests/audio_env.c).
PKGS     += portaudio-2.0
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wformat=2 -Wvla -Wpointer-arith
CSTD    := -std=c11 -D_POSIX_C_SOURCE=200809L
OPT     ?= -O2 -g
CFLAGS_ALL = $(CSTD) $(WARN) $(OPT) -Iinclude $(PKG_CFLAGS) $(EXTRA_CFLAGS) -pthread -MMD -MP
LDLIBS_ALL = $(PKG_LIBS) -lm -pthread $(EXTRA_LDFLAGS)

LIB_SRC := $(sort $(wildcard src/*.c))
CLI_SRC := $(sort $(wildcard src/cli/*.c))
TEST_SRC := $(sort $(wildcard tests/*.c))
BENCH_SRC := $(sort $(wildcard tests/bench/*.c))

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)
BENCH_OBJ := $(BENCH_SRC:%.c=$(BUILD)/%.o)

DEPS_STAMP := $(BUILD)/.deps-ok
BIN := $(BUILD)/ttsbuf

.PHONY: all deps demo test check asan tsan bench fmt install uninstall clean

# The default build also leaves ./ttsbuf at the top, for the README's commands.
ifeq ($(BUILD),build)
all: $(DEPS_STAMP) $(BIN) ttsbuf
ttsbuf: $(BIN)
	cp -f $(BIN) ttsbuf
else
all: $(DEPS_STAMP) $(BIN)
endif

# Installs missing Debian packages once per build tree (.ci/deps is quick
# and idempotent; it only calls apt-get when something is missing).
$(DEPS_STAMP): .ci/deps
	@sh .ci/deps
	@mkdir -p $(BUILD) && touch $@

deps:
	@sh .ci/deps

$(BUILD)/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/libttsbuf.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BIN): $(CLI_OBJ) $(BUILD)/libttsbuf.a
	$(CC) $(CFLAGS_ALL) -o $@ $(CLI_OBJ) $(BUILD)/libttsbuf.a $(LDLIBS_ALL)

# The test binary links the library and the CLI's objects except main.o,
# so CLI helpers are testable; the end-to-end tests run $(BIN) itself.
CLI_LIB_OBJ := $(filter-out $(BUILD)/src/cli/main.o,$(CLI_OBJ))

# The picture tests read Chromium's PNG screenshots with libpng.
TEST_LIBS := $(shell pkg-config --libs libpng 2>/dev/null)

$(BUILD)/tests/run: $(TEST_OBJ) $(CLI_LIB_OBJ) $(BUILD)/libttsbuf.a
	$(CC) $(CFLAGS_ALL) -o $@ $(TEST_OBJ) $(CLI_LIB_OBJ) $(BUILD)/libttsbuf.a \
	    $(LDLIBS_ALL) $(shell pkg-config --libs cmocka 2>/dev/null) $(TEST_LIBS)

# The main job on the embedded default: `ttsbuf run` streams from the
# built-in mock provider over real HTTP on loopback (no key, no network).
demo: all
	$(BIN) run

test check: all $(BUILD)/tests/run
	TTSBUF=$(CURDIR)/$(BIN) TB_TESTDATA=$(CURDIR)/tests/data TB_NODEDIR=$(CURDIR)/tests/node \
	    TB_AUDIODIR=$(CURDIR)/audio \
	    $(DEBUGGER) $(BUILD)/tests/run

SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
asan:
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	$(MAKE) BUILD=build-asan OPT="-O1 -g" EXTRA_CFLAGS="$(SAN_FLAGS)" \
	    EXTRA_LDFLAGS="$(SAN_FLAGS)" test

# ThreadSanitizer over the multi-threaded tests (the ring's two-thread stress).
# audioenv: PortAudio callback threads and the PulseAudio FIFO reader.
TSAN_FLAGS := -fsanitize=thread -fno-omit-frame-pointer
tsan:
	TB_TEST_ONLY=ring,serve,live,sweep,audioenv,player,bench TSAN_OPTIONS="halt_on_error=1 suppressions=$(CURDIR)/tests/tsan.supp" \
	$(MAKE) BUILD=build-tsan OPT="-O1 -g" EXTRA_CFLAGS="$(TSAN_FLAGS)" \
	    EXTRA_LDFLAGS="$(TSAN_FLAGS)" test

$(BUILD)/bench: $(BENCH_OBJ) $(BUILD)/tests/audio_env.o $(BUILD)/libttsbuf.a
	$(CC) $(CFLAGS_ALL) -o $@ $(BENCH_OBJ) $(BUILD)/tests/audio_env.o $(BUILD)/libttsbuf.a \
	    $(LDLIBS_ALL)

bench: all $(BUILD)/bench
	TB_AUDIODIR=$(CURDIR)/audio $(BUILD)/bench

fmt:
	clang-format -i $(LIB_SRC) $(CLI_SRC) $(TEST_SRC) $(BENCH_SRC) \
	    $(wildcard include/*.h include/ttsbuf/*.h src/*.h src/cli/*.h tests/*.h \
	    tests/bench/*.h)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib \
	    $(DESTDIR)$(PREFIX)/include/ttsbuf $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/ttsbuf
	install -m 644 $(BUILD)/libttsbuf.a $(DESTDIR)$(PREFIX)/lib/libttsbuf.a
	install -m 644 include/ttsbuf.h $(DESTDIR)$(PREFIX)/include/ttsbuf.h
	install -m 644 include/ttsbuf/*.h $(DESTDIR)$(PREFIX)/include/ttsbuf/
	install -m 644 man/ttsbuf.1 $(DESTDIR)$(PREFIX)/share/man/man1/ttsbuf.1

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/ttsbuf $(DESTDIR)$(PREFIX)/lib/libttsbuf.a \
	    $(DESTDIR)$(PREFIX)/include/ttsbuf.h $(DESTDIR)$(PREFIX)/share/man/man1/ttsbuf.1
	rm -rf $(DESTDIR)$(PREFIX)/include/ttsbuf

clean:
	rm -rf build build-asan build-tsan ttsbuf

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(BENCH_OBJ:.o=.d)
