# ttsbuf - is this LLM provider fast enough to feed a speech engine?
#
#   make            build ./ttsbuf (installs nothing: stops with one line
#                   naming what is missing and `make deps`)
#   make deps       install the Debian packages the build needs (.ci/deps build)
#   make demo       install what the build needs, build, and run against the
#                   built-in mock provider
#   make test       install what the build and the tests need (.ci/deps test),
#                   build, and run the whole test suite
#   make check      build and run the whole test suite (installs nothing)
#   make asan       the suite under AddressSanitizer + UndefinedBehaviorSanitizer
#   make tsan       the multi-threaded tests under ThreadSanitizer
#   make bench      benchmarks (prints figures; no pass/fail; TB_BENCH_ONLY=speech,...)
#   make fuzz       every libFuzzer target for FUZZ_SECONDS each (clang)
#   make soak       the mock server under 1000 streams for SOAK_SECONDS
#   make lint       cppcheck and clang-tidy over the sources, tests and benchmarks
#   make valgrind-live  the live client under valgrind --leak-check=full
#   make fmt        clang-format every source file
#   make man        rewrite man/ttsbuf.1's option lists from the option rows
#   make install    PREFIX=/usr/local DESTDIR=  (the tool, library, man pages and
#                   the JSON Schemas of its outputs, share/ttsbuf/schema;
#                   LIBDIR=$(PREFIX)/lib for the library and pkgconfig/ttsbuf.pc)
#   make deb        the Debian packages ttsbuf and libttsbuf-dev, in build/deb/
#   make deb-test   make deb, then lintian, the link check, an install into a
#                   fresh Debian root, the example through pkg-config
#   make image      the container image, from build/deb's package (podman or docker)
#   make image-test the recipe installs only the package; where an engine runs,
#                   the image runs bench --mock and a shard
#   make clean
#   make test DEBUGGER=valgrind   run the suite under a tool
#   make test JOBS=N   N groups at once (default: what fits the machine;
#                   JOBS=1 one at a time)
#   make check-busy the groups that bound real time (TB_TEST_ONLY=@timing)
#                   with two CPU-bound processes beside them (BUSY=N)
#   BUILD_JOBS=N    the compilers the goals above run at once (default: a
#                   CPU each; a -j of your own is kept)

CC      ?= cc
# demo, test, asan, tsan, check-busy and fuzz build with a compiler per
# CPU unless make was given a -j of its own (its job server is then shared).
BUILD_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
PAR = $(if $(findstring -j,$(MAKEFLAGS)),,-j$(BUILD_JOBS))
PREFIX  ?= /usr/local
LIBDIR  ?= $(PREFIX)/lib
DESTDIR ?=
BUILD   ?= build
DEBUGGER ?=

PKGS     := libcjson libcurl espeak-ng
# PortAudio: the speech sink and the audio tests (tests/audio_env.c).
PKGS     += portaudio-2.0
# libsamplerate: the mock TTS of `serve` resamples eSpeak NG's 22050 Hz
# speech to the rate a request asks for.
PKGS     += samplerate
# libwebsockets: the WebSocket TTS dialects (src/tts/ttsws.c); curl in
# Debian 12 is built without WebSocket support.  libuv: the loop its
# connections are served on, which the caller's loop embeds
# (src/tts/ttsws_loop.c; lws reaches it through its libuv event-loop
# plugin, libwebsockets-evlib-uv, loaded at run time).
PKGS     += libwebsockets libuv
# sonic (libsonic-dev) stretches speech to the rate model's durations; it
# ships no pkg-config file.
NOPC_LIBS := -lsonic

# Nothing is installed by a build: before any goal that compiles, the
# compiler, pkg-config and the four libraries must be there, or make stops
# with one line.  `make deps`, `make demo` and `make test` install (their
# recipes re-invoke make, so the flags below are computed after the
# install, not before it).
NO_BUILD_GOALS := deps demo test clean fmt uninstall image-test
# `make image` needs a container engine: without one it stops here, before
# the package it would hold is built or its tools asked for.
ENGINE ?= $(firstword $(foreach e,podman docker,$(if $(shell command -v $(e)),$(e))))
ifneq ($(filter image,$(MAKECMDGOALS)),)
ifeq ($(ENGINE),)
$(error ttsbuf: make image needs podman or docker (`sh .ci/deps image` installs podman; or ENGINE=...))
endif
endif
# The suite (check, asan, tsan) needs the test set; fuzz, lint and
# valgrind-live their extras, installed by name (.ci/run does).
ifneq ($(if $(MAKECMDGOALS),$(filter-out $(NO_BUILD_GOALS),$(MAKECMDGOALS)),all),)
DEPS_MISSING := $(shell CC='$(CC)' sh .ci/deps --missing build)
ifneq ($(DEPS_MISSING),)
$(error ttsbuf: missing Debian packages: $(DEPS_MISSING); `make deps` installs them (apt-get, through sudo when not root))
endif
DEPS_SETS := $(if $(filter check asan tsan,$(MAKECMDGOALS)),test) \
    $(patsubst valgrind-live,valgrind,$(filter fuzz lint valgrind-live,$(MAKECMDGOALS))) \
    $(if $(filter deb image,$(MAKECMDGOALS)),deb) $(if $(filter deb-test,$(MAKECMDGOALS)),deb-test)
ifneq ($(strip $(DEPS_SETS)),)
DEPS_MISSING := $(shell CC='$(CC)' sh .ci/deps --missing $(DEPS_SETS))
ifneq ($(DEPS_MISSING),)
$(error ttsbuf: missing Debian packages: $(DEPS_MISSING); `sh .ci/deps $(strip $(DEPS_SETS))` installs them (apt-get, through sudo when not root))
endif
endif
endif

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wformat=2 -Wvla -Wpointer-arith
CSTD    := -std=c11 -D_POSIX_C_SOURCE=200809L
OPT     ?= -O2 -g
CFLAGS_ALL = $(CSTD) $(WARN) $(OPT) -Iinclude -Isrc $(PKG_CFLAGS) $(EXTRA_CFLAGS) -pthread -MMD -MP
# Full RELRO: symbols bound at start-up, not on first call (the GOT is then
# read-only, and the first request of a run does not pay for the lookups).
LDHARDEN := -Wl,-z,relro,-z,now
# --as-needed before the libraries: a library the code calls nothing from
# (PortAudio's pkg-config names ALSA; -lpthread is in libc) is not
# recorded as needed.  Debian's gcc does this by default, clang does not.
LDLIBS_ALL = -Wl,--as-needed $(PKG_LIBS) $(NOPC_LIBS) -lm -pthread $(LDHARDEN) $(EXTRA_LDFLAGS)

# The library is every subsystem folder of src/ but the CLI (each folder's
# README.md says what it does and what it may include; `make lint` and the layers test
# hold the includes to it).  A file includes another folder's private
# header by its folder ("base/grow.h"), found through -Isrc.
LIB_SRC := $(sort $(filter-out src/cli/%,$(wildcard src/*/*.c)))
CLI_SRC := $(sort $(wildcard src/cli/*.c))
TEST_SRC := $(sort $(wildcard tests/*.c))
BENCH_SRC := $(sort $(wildcard tests/bench/*.c))

# Generated sources: the English Punkt tables (data/punkt_tab/gen.sh, from
# the data files beside it), the TTS presets (data/tts_presets/gen.sh) and
# the built-in conversations (data/conversations/gen.sh) are written into the build directory, not kept in src/; every build
# (asan, tsan, fuzz) makes its own copy.
PUNKT_DATA := $(sort $(wildcard data/punkt_tab/english/*))
GEN_SRC  := $(BUILD)/gen/punkt_en.c $(BUILD)/gen/tts_presets.c $(BUILD)/gen/convo_builtin.c
GEN_OBJ  := $(GEN_SRC:.c=.o)

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o) $(GEN_OBJ)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)
BENCH_OBJ := $(BENCH_SRC:%.c=$(BUILD)/%.o)
# Fuzz targets (see "Reliability" below): tests/fuzz/fuzz_<name>.c.
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_ALL_SRC := $(FUZZ_SRC) tests/fuzz/replay.c
FUZZ_NAMES := $(FUZZ_SRC:tests/fuzz/fuzz_%.c=%)
FUZZ_REPLAY := $(FUZZ_NAMES:%=$(BUILD)/fuzz/replay_%)
FUZZ_BINS := $(FUZZ_NAMES:%=$(BUILD)/fuzz/fuzz_%)

BIN := $(BUILD)/ttsbuf

.PHONY: all deps demo test check asan tsan bench fmt man install install-man uninstall \
	uninstall-man clean

# The default build also leaves ./ttsbuf at the top, for the README's commands.
ifeq ($(BUILD),build)
all: $(BIN) ttsbuf
ttsbuf: $(BIN)
	cp -f $(BIN) ttsbuf
else
all: $(BIN)
endif

# .ci/deps is quick and idempotent: it only calls apt-get (and npm) for
# what is missing.
deps:
	@sh .ci/deps build

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/gen/punkt_en.c: data/punkt_tab/gen.sh $(PUNKT_DATA)
	@mkdir -p $(dir $@)
	sh data/punkt_tab/gen.sh $@

$(BUILD)/gen/tts_presets.c: data/tts_presets/gen.sh data/tts_presets/tts_presets.json
	@mkdir -p $(dir $@)
	sh data/tts_presets/gen.sh $@

$(BUILD)/gen/convo_builtin.c: data/conversations/gen.sh data/conversations/builtin.jsonl
	@mkdir -p $(dir $@)
	sh data/conversations/gen.sh $@

# The generated table includes src/seg/punkt_tab.h (through -Isrc).
$(GEN_OBJ): %.o: %.c
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

# The exits group's out-of-memory cases: the command with an allocator that
# fails once (tests/failalloc/failalloc.c: TB_FAILALLOC=N fails the N-th
# allocation ttsbuf's own code makes).
FAILALLOC_WRAP := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=strndup
$(BUILD)/ttsbuf-failalloc: $(CLI_OBJ) $(BUILD)/tests/failalloc/failalloc.o $(BUILD)/libttsbuf.a
	$(CC) $(CFLAGS_ALL) -o $@ $(CLI_OBJ) $(BUILD)/tests/failalloc/failalloc.o \
	    $(BUILD)/libttsbuf.a $(FAILALLOC_WRAP) $(LDLIBS_ALL)

# The main job on the embedded default: `ttsbuf run --mock` streams from
# the built-in mock provider over real HTTP on loopback (never a paid
# provider, whatever key the shell holds).  The README's first command:
# installs what the build needs, then builds in a new make (flags computed
# after the install).
demo:
	@sh .ci/deps build
	@$(MAKE) --no-print-directory $(PAR) all
	$(BIN) run --mock

# The README's second command: installs what the build and the tests need,
# then runs `make check` in a new make.
test:
	@sh .ci/deps test
	@$(MAKE) --no-print-directory $(PAR) check

# The end-to-end tests run the binary through tests/collect/collect.c,
# which keeps a copy of every JSON, JSONL and CSV file a run writes in
# $(BUILD)/test-outputs/ for the "schema" group to validate.  It is built
# without the sanitizers: what the tests measure is the binary's.
$(BUILD)/ttsbuf-collect: tests/collect/collect.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -O2 -o $@ $<

# check builds the benchmark too (without running it), so that it cannot
# fall behind the library unnoticed.
check: all $(BUILD)/tests/run $(BUILD)/ttsbuf-collect $(BUILD)/bench $(FUZZ_REPLAY) \
    $(BUILD)/ttsbuf-failalloc
	TTSBUF=$(CURDIR)/$(BUILD)/ttsbuf-collect TB_TTSBUF_REAL=$(CURDIR)/$(BIN) \
	    TB_TTSBUF_FAILALLOC=$(CURDIR)/$(BUILD)/ttsbuf-failalloc \
	    TB_COLLECT_DIR=$(CURDIR)/$(BUILD)/test-outputs TB_TESTDATA=$(CURDIR)/tests/data TB_NODEDIR=$(CURDIR)/tests/node \
	    TB_AUDIODIR=$(CURDIR)/audio \
	    TB_FUZZDIR=$(CURDIR)/tests/fuzz TB_FUZZBIN=$(CURDIR)/$(BUILD)/fuzz \
	    TB_TEST_LOGDIR=$(CURDIR)/$(BUILD)/test-logs $(if $(JOBS),TB_TEST_JOBS=$(JOBS)) \
	    $(if $(BUSY),TB_TEST_BUSY=$(BUSY)) \
	    $(DEBUGGER) $(BUILD)/tests/run

# The timing groups on a busy machine: they must pass with two CPU-bound
# processes beside them (the runner starts and stops them; BUSY=N for N,
# BUSY=0 when the load is work of one's own, as .ci/run's lint and fuzz).
check-busy:
	$(MAKE) --no-print-directory $(PAR) check TB_TEST_ONLY=@timing BUSY=$(if $(BUSY),$(BUSY),2)
.PHONY: check-busy

# float-cast-overflow and float-divide-by-zero are not part of GCC's
# "undefined": a double too large for the integer it is converted to, and a
# division by zero the code did not mean, are found only with them.
SAN_FLAGS := -fsanitize=address,undefined,float-cast-overflow,float-divide-by-zero \
    -fno-omit-frame-pointer -fno-sanitize-recover=all
asan:
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	$(MAKE) $(PAR) BUILD=build-asan OPT="-O1 -g" EXTRA_CFLAGS="$(SAN_FLAGS)" \
	    EXTRA_LDFLAGS="$(SAN_FLAGS)" check

# ThreadSanitizer over every multi-threaded test group: the ring's two-thread
# stress, the server (one loop and several), live runs, sweeps, the fault matrix and the stream
# reader's cases (their scripted peers), bench on several loop threads;
# audioenv: PortAudio callback
# threads and the PulseAudio FIFO reader.  schema, last, validates what the
# TSan-built binary wrote in those groups.
TSAN_FLAGS := -fsanitize=thread -fno-omit-frame-pointer
tsan:
	TB_TEST_ONLY=ring,serve,servethreads,live,ttslive,sweep,audioenv,player,ttsplay,bench,threads,fault,reader,schema TSAN_OPTIONS="halt_on_error=1 suppressions=$(CURDIR)/tests/tsan.supp" \
	$(MAKE) $(PAR) BUILD=build-tsan OPT="-O1 -g" EXTRA_CFLAGS="$(TSAN_FLAGS)" \
	    EXTRA_LDFLAGS="$(TSAN_FLAGS)" check

$(BUILD)/bench: $(BENCH_OBJ) $(BUILD)/tests/audio_env.o $(BUILD)/libttsbuf.a
	$(CC) $(CFLAGS_ALL) -o $@ $(BENCH_OBJ) $(BUILD)/tests/audio_env.o $(BUILD)/libttsbuf.a \
	    $(LDLIBS_ALL)

bench: all $(BUILD)/bench
	TB_AUDIODIR=$(CURDIR)/audio $(BUILD)/bench

fmt:
	clang-format -i $(LIB_SRC) $(CLI_SRC) $(TEST_SRC) $(BENCH_SRC) $(FUZZ_ALL_SRC) \
	    $(wildcard include/*.h include/ttsbuf/*.h src/*/*.h tests/*.h \
	    tests/bench/*.h tests/fuzz/*.h)

# The option lists in man/ttsbuf.1 (between its BEGIN/END OPTIONS markers)
# are generated from the commands' option rows in src/cli, like --help;
# tests/test_docs.c fails when they differ.
MAN_PAGES := man/ttsbuf.1 man/ttsbuf-trace.5 man/ttsbuf-model.7
man: $(BIN)
	$(BIN) --man-options >$(BUILD)/man-options.roff
	awk 'FNR == NR { if ($$0 ~ /^\.\\" BEGIN OPTIONS /) c = $$4; \
	    else if ($$0 ~ /^\.\\" END OPTIONS /) c = ""; else if (c != "") b[c] = b[c] $$0 "\n"; next } \
	    /^\.\\" BEGIN OPTIONS / { printf "%s\n%s", $$0, b[$$4]; skip = 1; next } \
	    /^\.\\" END OPTIONS / { skip = 0 } !skip' $(BUILD)/man-options.roff man/ttsbuf.1 \
	    >$(BUILD)/ttsbuf.1.new
	mv $(BUILD)/ttsbuf.1.new man/ttsbuf.1

# ttsbuf.pc: the library is a static archive, so its users link its
# dependencies too: Requires names the pkg-config modules the build itself
# uses (ttsbuf.pc.in says why not Requires.private).  A LIBDIR under PREFIX
# is written relative to it (${exec_prefix}/lib).
TB_VERSION = $(shell sed -n 's/^\#define TB_VERSION "\(.*\)"$$/\1/p' include/ttsbuf/version.h)
$(BUILD)/ttsbuf.pc: ttsbuf.pc.in include/ttsbuf/version.h Makefile
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(patsubst $(PREFIX)/%,$${exec_prefix}/%,$(LIBDIR))|' \
	    -e 's|@VERSION@|$(TB_VERSION)|' \
	    -e 's|@REQUIRES@|$(PKGS)|' -e 's|@NOPC_LIBS@|$(NOPC_LIBS)|' ttsbuf.pc.in >$@.tmp
	mv $@.tmp $@
.PHONY: $(BUILD)/ttsbuf.pc

install: all install-man $(BUILD)/ttsbuf.pc
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(LIBDIR)/pkgconfig \
	    $(DESTDIR)$(PREFIX)/include/ttsbuf
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/ttsbuf
	install -m 644 $(BUILD)/libttsbuf.a $(DESTDIR)$(LIBDIR)/libttsbuf.a
	install -m 644 $(BUILD)/ttsbuf.pc $(DESTDIR)$(LIBDIR)/pkgconfig/ttsbuf.pc
	install -m 644 include/ttsbuf.h $(DESTDIR)$(PREFIX)/include/ttsbuf.h
	install -m 644 include/ttsbuf/*.h $(DESTDIR)$(PREFIX)/include/ttsbuf/
	install -d $(DESTDIR)$(PREFIX)/share/ttsbuf/schema
	install -m 644 schema/*.schema.json $(DESTDIR)$(PREFIX)/share/ttsbuf/schema/

# The man pages alone (no build needed): section 1 the command, 5 the
# trace format, 7 the playout model.
install-man:
	install -d $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man5 \
	    $(DESTDIR)$(PREFIX)/share/man/man7
	install -m 644 man/ttsbuf.1 $(DESTDIR)$(PREFIX)/share/man/man1/ttsbuf.1
	install -m 644 man/ttsbuf-trace.5 $(DESTDIR)$(PREFIX)/share/man/man5/ttsbuf-trace.5
	install -m 644 man/ttsbuf-model.7 $(DESTDIR)$(PREFIX)/share/man/man7/ttsbuf-model.7

uninstall: uninstall-man
	rm -f $(DESTDIR)$(PREFIX)/bin/ttsbuf $(DESTDIR)$(LIBDIR)/libttsbuf.a \
	    $(DESTDIR)$(LIBDIR)/pkgconfig/ttsbuf.pc $(DESTDIR)$(PREFIX)/include/ttsbuf.h
	rm -rf $(DESTDIR)$(PREFIX)/include/ttsbuf $(DESTDIR)$(PREFIX)/share/ttsbuf/schema
	-rmdir $(DESTDIR)$(PREFIX)/share/ttsbuf 2>/dev/null

uninstall-man:
	rm -f $(DESTDIR)$(PREFIX)/share/man/man1/ttsbuf.1 \
	    $(DESTDIR)$(PREFIX)/share/man/man5/ttsbuf-trace.5 \
	    $(DESTDIR)$(PREFIX)/share/man/man7/ttsbuf-model.7

clean:
	rm -rf build build-asan build-tsan build-fuzz ttsbuf

# ---- Reliability: fuzzing, soak, lint ----
# Fuzz targets are discovered: tests/fuzz/fuzz_<name>.c with its seed corpus
# (and the crashers found so far) in tests/fuzz/corpus/<name>/.  `make test`
# replays every corpus through each target built with the ordinary
# compiler and tests/fuzz/replay.c as main (test group "fuzz"); `make fuzz`
# builds them with clang's libFuzzer and runs each for FUZZ_SECONDS.  New
# inputs go to build-fuzz/corpus/<name>/, crashers to build-fuzz/crash-*.
FUZZ_SECONDS ?= 60
FUZZ_ARGS ?=
FUZZ_SAN := -fsanitize=address,undefined,float-cast-overflow,float-divide-by-zero \
    -fno-omit-frame-pointer -fno-sanitize-recover=all
FUZZ_OBJ_DEPS = $(CLI_LIB_OBJ) $(BUILD)/libttsbuf.a

$(BUILD)/fuzz/replay_%: $(BUILD)/tests/fuzz/fuzz_%.o $(BUILD)/tests/fuzz/replay.o $(FUZZ_OBJ_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(BUILD)/tests/fuzz/replay.o $(FUZZ_OBJ_DEPS) $(LDLIBS_ALL)

$(BUILD)/fuzz/fuzz_%: $(BUILD)/tests/fuzz/fuzz_%.o $(FUZZ_OBJ_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJ_DEPS) $(LDLIBS_ALL)

fuzz-bins: $(FUZZ_BINS)

# One target at a time (the machine is shared); a crash stops `make fuzz`
# with the crasher's path.  The summary line per target is libFuzzer's own
# final "#N DONE cov: C ft: F" plus its run count.
fuzz:
	$(MAKE) $(PAR) BUILD=build-fuzz CC=clang OPT="-O1 -g" \
	    EXTRA_CFLAGS="-fsanitize=fuzzer-no-link $(FUZZ_SAN)" EXTRA_LDFLAGS="$(FUZZ_SAN)" fuzz-bins
	@set -e; for n in $(if $(FUZZ_ONLY),$(FUZZ_ONLY),$(FUZZ_NAMES)); do \
	    mkdir -p build-fuzz/corpus/$$n; \
	    echo "fuzz $$n: $(FUZZ_SECONDS) s"; \
	    build-fuzz/fuzz/fuzz_$$n -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
	        -print_final_stats=1 -artifact_prefix=build-fuzz/crash-$$n- $(FUZZ_ARGS) \
	        build-fuzz/corpus/$$n tests/fuzz/corpus/$$n >build-fuzz/log-$$n.txt 2>&1 \
	        || { tail -n 40 build-fuzz/log-$$n.txt; exit 1; }; \
	    grep -E '^#[0-9]+[[:space:]]+DONE' build-fuzz/log-$$n.txt | tail -n 1; \
	    grep -E '^Done [0-9]+ runs' build-fuzz/log-$$n.txt | tail -n 1; \
	done

# The soak: 1000 concurrent streams against the mock for SOAK_SECONDS,
# memory and descriptors sampled (tests/soak/soak.c; exit 1 on a leak or a
# lost event).  SOAK_STREAMS, SOAK_TOKENS and SOAK_SAMPLE tune it.
SOAK_SECONDS ?= 600
$(BUILD)/soak: $(BUILD)/tests/soak/soak.o $(BUILD)/tests/bench/bench_mock.o $(BUILD)/libttsbuf.a
	$(CC) $(CFLAGS_ALL) -o $@ $^ $(LDLIBS_ALL)

soak: $(BUILD)/soak
	SOAK_SECONDS=$(SOAK_SECONDS) $(BUILD)/soak

# Static analysis: cppcheck (warning, performance and portability checks)
# and clang-tidy (.clang-tidy says which checks and why some are off), over
# the library (with its generated table), the CLI, the fuzz targets and
# the soak, and over the test suite, the benchmarks and the output
# collector (tests/.clang-tidy leaves two more checks out there; cppcheck
# reads tests/cmocka.cfg, which says that a failed cmocka check ends the
# test); any finding fails.
LINT_SRC := $(LIB_SRC) $(GEN_SRC) $(CLI_SRC) $(FUZZ_ALL_SRC) tests/soak/soak.c
LINT_TEST_SRC := $(TEST_SRC) $(BENCH_SRC) tests/collect/collect.c tests/failalloc/failalloc.c
CPPCHECK := cppcheck --quiet --std=c11 --enable=warning,performance,portability --inline-suppr \
    --error-exitcode=1 -D_POSIX_C_SOURCE=200809L -Iinclude -Isrc
# The files are shared out over LINT_JOBS processes (default: a CPU
# each); xargs fails when any clang-tidy does.
LINT_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
lint: $(GEN_SRC)
	sh tests/layers.sh
	$(CPPCHECK) -j $(LINT_JOBS) $(LINT_SRC)
	$(CPPCHECK) -j $(LINT_JOBS) --library=tests/cmocka.cfg $(LINT_TEST_SRC)
	printf '%s\n' $(LINT_SRC) $(LINT_TEST_SRC) | xargs -P $(LINT_JOBS) -n 4 \
	    sh -c 'clang-tidy --quiet "$$@" -- $(CSTD) -Iinclude -Isrc $(PKG_CFLAGS)' clang-tidy

# The live client under valgrind: a clean run, a failing one, a redirect
# loop; any leak or memory error fails (--errors-for-leak-kinds).
VALGRIND := valgrind --quiet --leak-check=full --errors-for-leak-kinds=definite,indirect \
    --error-exitcode=99
valgrind-live: all
	$(VALGRIND) $(BIN) run --mock --synth tps=300,tokens=60,ttft=0.02 -q --json >/dev/null
	$(VALGRIND) $(BIN) run --mock --synth tps=300,tokens=60,ttft=0.02 --fault drop@20 -q \
	    --record /dev/null >/dev/null; test $$? -eq 3
	$(VALGRIND) $(BIN) run --base-url http://127.0.0.1:1/v1 --model m -q >/dev/null; \
	    test $$? -eq 3
	$(VALGRIND) $(BIN) sim --synth tokens=2000 --json >/dev/null

.PHONY: fuzz fuzz-bins soak lint valgrind-live

# ---- Packages: Debian, the container image ----
# `make deb` builds the Debian packages (debian/: ttsbuf, libttsbuf-dev)
# with dpkg-buildpackage from a copy of the source tree in
# build/deb-src/ (the package's clean step would remove build/ itself)
# and puts them in build/deb/ with the build's log.  The packages' version
# is debian/changelog's, which must be include/ttsbuf/version.h's.
DEB_OUT := build/deb
DEB_SRC := build/deb-src/ttsbuf
deb:
	@v=$$(dpkg-parsechangelog -S Version); [ "$$v" = "$(TB_VERSION)" ] || { \
	    echo "ttsbuf: debian/changelog is at $$v, include/ttsbuf/version.h at $(TB_VERSION): add a changelog entry" >&2; \
	    exit 1; }
	rm -rf $(DEB_OUT) build/deb-src
	mkdir -p $(DEB_OUT) $(DEB_SRC)
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then \
	    git ls-files -z --cached --others --exclude-standard | tar --null --no-recursion -T - -cf -; \
	else tar -cf - --exclude='./build*' --exclude=./.git --exclude=./ttsbuf .; fi | tar -C $(DEB_SRC) -xf -
	cd $(DEB_SRC) && dpkg-buildpackage -us -uc -b -J2 >$(CURDIR)/$(DEB_OUT)/build.log 2>&1 || \
	    { tail -n 40 $(CURDIR)/$(DEB_OUT)/build.log; exit 1; }
	mv build/deb-src/*.deb build/deb-src/*.buildinfo build/deb-src/*.changes $(DEB_OUT)/
	@ls $(DEB_OUT)/*.deb

# The packages' test (tests/pkg/deb-test.sh): lintian, the link check,
# an install with apt into a fresh Debian 12 root (debootstrap, kept in
# build/deb-root/) where the command, its man page and the example
# program through pkg-config must work.
deb-test: deb
	sh tests/pkg/deb-test.sh

# The image (Containerfile) installs build/deb's package on IMAGE_BASE.
# IMAGE_BASE: the Debian 12 image to start from (on a machine with no
# registry, `sh tests/pkg/base-image.sh` makes one from the mirror).
# (ENGINE: at the top, where `make image` without one stops.)
IMAGE ?= ttsbuf:$(TB_VERSION)
IMAGE_BASE ?= docker.io/library/debian:bookworm-slim
image: deb
	$(ENGINE) build $(IMAGE_FLAGS) --build-arg BASE=$(IMAGE_BASE) -t $(IMAGE) -f Containerfile $(DEB_OUT)

# The image's test (tests/pkg/image-test.sh): the recipe installs the
# package and nothing else; when an engine runs here, the image is built
# on a base made from the mirror and runs bench --mock and a shard.
image-test:
	sh tests/pkg/image-test.sh

.PHONY: deb deb-test image image-test

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(BENCH_OBJ:.o=.d)
-include $(FUZZ_ALL_SRC:%.c=$(BUILD)/%.d) $(BUILD)/tests/soak/soak.d \
    $(BUILD)/tests/failalloc/failalloc.d
