# kforge build. `make` builds build/kforge and build/kforge-worker; `make test` builds a sanitized copy
# under build/asan and runs every unit and integration test; see README.md for the rest.
# Sources are found by folder, so a module adds files without touching this file.

CUDA_HOME ?= /usr/local/cuda
CC        ?= cc
CXX       ?= g++
BUILD     ?= build
SAN       ?=

WARN     := -Wall -Wextra -Wshadow -Wno-unused-parameter -Wformat=2 -Wvla \
            -Wno-format-truncation  # bounded messages truncate on purpose
# WERROR=1 (CI) turns every warning into an error.
ifeq ($(WERROR),1)
WARN     += -Werror
endif
CPPFLAGS := -I. -Icore -I$(CUDA_HOME)/include -D_GNU_SOURCE -MMD -MP
CFLAGS   := -std=c11 -O2 -g $(WARN) $(SAN)
CXXFLAGS := -std=c++17 -O2 -g -Wall -Wextra -Wno-unused-parameter $(filter -Werror,$(WARN)) -fno-exceptions \
            -fno-rtti $(SAN)
LDFLAGS  := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 $(SAN)

# The parent links the Debian libraries; nothing links -lcuda or -lcupti (they are dlopen'ed by the worker).
PARENT_LIBS := -lcjson -lpcre2-8 -lsqlite3 -lcurl -lseccomp -lnvrtc -ldl -lpthread -lm
# The worker depends on libc, libdl and libnvrtc only (docs/architecture.md).
WORKER_LIBS := -ldl -lpthread -lm

# Module sources, in dependency order (docs/architecture.md's table).
CORE_LITE_SRC := core/status.c core/buf.c core/libop.c
CORE_SRC      := $(filter-out $(CORE_LITE_SRC),$(wildcard core/*.c))
COMMON_SRC    := $(wildcard sandbox/common/*.c)
SANDBOX_SRC   := $(wildcard sandbox/*.c sandbox/cpu/*.c)
WORKER_SRC    := $(wildcard sandbox/worker/*.c sandbox/cpu/worker/*.c sandbox/cuda/*.c)
WORKER_CXX    := $(wildcard sandbox/cuda/*.cpp)
VERIFIER_SRC  := $(wildcard verifier/*.c)
PROFILER_SRC  := $(wildcard profiler/*.c)
KB_SRC        := $(wildcard kb/*.c)
EVAL_SRC      := $(wildcard eval/*.c)
AGENT_SRC     := $(wildcard agent/*.c)
REPORTS_SRC   := $(wildcard reports/*.c)
RUNNER_SRC    := $(wildcard runner/*.c)
REGRESS_SRC   := $(wildcard regress/*.c)
EXPORT_SRC    := $(wildcard export/*.c)
SCAFFOLD_SRC  := $(wildcard scaffold/*.c)
CLI_SRC       := $(wildcard cli/*.c)

# Data files compiled in (core/embed.h). A module lists its folder here.
EMBED_DIRS  := sandbox/cpu/shim agent/prompts agent/data kb/sql scaffold/templates
EMBED_FILES := $(sort $(shell find $(EMBED_DIRS) -type f ! -name '*~' 2>/dev/null))

LIB_SRC := $(CORE_LITE_SRC) $(CORE_SRC) $(COMMON_SRC) $(SANDBOX_SRC) $(VERIFIER_SRC) $(PROFILER_SRC) \
           $(KB_SRC) $(EVAL_SRC) $(AGENT_SRC) $(REPORTS_SRC) $(RUNNER_SRC) $(REGRESS_SRC) $(EXPORT_SRC) \
           $(SCAFFOLD_SRC)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(patsubst %.cpp,$(BUILD)/obj/%.o,$(1)))

LIB_OBJ    := $(call obj,$(LIB_SRC)) $(BUILD)/obj/gen/embed.o
CLI_OBJ    := $(call obj,$(CLI_SRC))
# The worker's own code is a library (its main apart) so the tests link what the worker runs.
WORKER_MAIN    := $(BUILD)/obj/sandbox/worker/main.o
WORKER_LIB_OBJ := $(filter-out $(WORKER_MAIN),$(call obj,$(WORKER_SRC) $(WORKER_CXX)))
WORKER_OBJ     := $(WORKER_MAIN) $(call obj,$(CORE_LITE_SRC) $(COMMON_SRC))
# Objects a single test needs besides the libraries: tests/taskref (host implementations of the suite).
TASKREF_OBJ    := $(BUILD)/obj/tests/taskref/taskref.o

UNIT_SRC   := $(wildcard tests/unit/test_*.c)
UNIT_BIN   := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))
BENCH_SRC  := $(wildcard bench/bench_*.c)
BENCH_BIN  := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC))

.PHONY: all test unit bench deps lint check-refs format format-check clean check-links demo fuzz tsan
all: $(BUILD)/kforge $(BUILD)/kforge-worker

$(BUILD)/libkforge.a: $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/kforge: $(CLI_OBJ) $(BUILD)/libkforge.a
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libkforge.a $(PARENT_LIBS)

$(BUILD)/libkforge-worker.a: $(WORKER_LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

# main.c reaches the backends through weak references, which pull nothing out of an archive: all of it.
$(BUILD)/kforge-worker: $(WORKER_OBJ) $(BUILD)/libkforge-worker.a
	$(CC) $(LDFLAGS) -rdynamic -o $@ $(WORKER_MAIN) -Wl,--whole-archive $(BUILD)/libkforge-worker.a \
	  -Wl,--no-whole-archive $(filter-out $(WORKER_MAIN),$(WORKER_OBJ)) $(WORKER_LIBS)

$(BUILD)/gen/embed.c: $(EMBED_FILES) tools/embed.sh Makefile
	@mkdir -p $(@D)
	tools/embed.sh $@ $(EMBED_FILES)

$(BUILD)/obj/gen/embed.o: $(BUILD)/gen/embed.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -w -c -o $@ $<

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/obj/%.o: %.cpp
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -c -o $@ $<

# Tests link the parent's library and the worker's (kf_backend_cpu, kf_backend_cuda), no source compiled in.
$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libkforge.a $(BUILD)/libkforge-worker.a tests/unit/testing.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Itests/unit $(LDFLAGS) -o $@ $< $(filter %.o,$^) $(BUILD)/libkforge.a \
	  $(BUILD)/libkforge-worker.a $(BUILD)/libkforge.a $(PARENT_LIBS)

$(BUILD)/tests/test_tasks_ref: $(TASKREF_OBJ)

$(BUILD)/bench/%: bench/%.c $(BUILD)/libkforge.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libkforge.a $(PARENT_LIBS)

unit: $(UNIT_BIN)

# The tests run against a sanitized build (ASan + UBSan) in build/asan.
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
test:
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/asan SAN="$(SANFLAGS)" all unit
	@$(MAKE) --no-print-directory all
	@tests/run.sh $(BUILD)/asan

# libFuzzer targets (tests/fuzz/README.md) for the parsers of untrusted input, built with clang-14 under
# ASan + UBSan into build/fuzz from the modules they need (core, sandbox/common, agent; the embedded data
# is the plain build's object). `make fuzz` runs each FUZZ_TIME seconds and fails on any finding.
FUZZ_TIME  ?= 30
FUZZ_CC    := clang-14
FUZZ_DIR   := $(BUILD)/fuzz
FUZZ_SAN   := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_FLAGS := -std=c11 -O1 -g $(filter-out -Wno-format-truncation,$(WARN)) $(FUZZ_SAN)
FUZZ_LIB   := $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(CORE_LITE_SRC) $(CORE_SRC) $(COMMON_SRC) $(AGENT_SRC))
FUZZ_BIN   := $(patsubst tests/fuzz/%.c,$(FUZZ_DIR)/%,$(wildcard tests/fuzz/fuzz_*.c))

$(FUZZ_DIR)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_DIR)/libfuzz.a: $(FUZZ_LIB)
	rm -f $@ && ar rcs $@ $^

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_DIR)/libfuzz.a $(BUILD)/obj/gen/embed.o
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer -DKF_TOP='"$(CURDIR)"' $(LDFLAGS) -o $@ $< \
	  $(FUZZ_DIR)/libfuzz.a $(BUILD)/obj/gen/embed.o $(PARENT_LIBS)

fuzz: $(FUZZ_BIN)
	@tests/fuzz/run.sh $(FUZZ_DIR) $(FUZZ_TIME)

# ThreadSanitizer over the threaded code, built into build/tsan: the unit tests of the verifier, the LLM
# client (curl multi) and the regex cache, then a sanitized kforge optimize at concurrency 2, which runs the
# agent's evaluation threads and each verification's shape threads (tests/tsan/run.sh). The worker is the
# plain build's (another process).
TSAN_TESTS := test_verifier test_agent_llm test_core_regex
tsan: all
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/tsan SAN="-fsanitize=thread" \
	  $(BUILD)/tsan/kforge $(addprefix $(BUILD)/tsan/tests/,$(TSAN_TESTS))
	@tests/tsan/run.sh $(BUILD)/tsan $(BUILD) $(TSAN_TESTS)

bench: all $(BENCH_BIN)
	@bench/run.sh $(BUILD)

deps:
	@tools/deps.sh

# The README's main job: optimize an example task offline (cpu backend, a recorded LLM transcript).
demo: deps
	@$(MAKE) --no-print-directory all
	@tests/data/demo/run.sh $(BUILD)

# tools/lint.sh runs tools/check-refs.sh first; `make check-refs` runs it alone (well under a second).
lint:
	@tools/lint.sh

check-refs:
	@sh tools/check-refs.sh

format:
	clang-format -i $$(git ls-files '*.c' '*.h' '*.cpp')

# CI: fails, naming each file and line, when a tracked source is not as `make format` leaves it
format-check:
	clang-format --dry-run -Werror $$(git ls-files '*.c' '*.h' '*.cpp')

# The GPU libraries are loaded with dlopen where they are used: the driver and CUPTI by the worker, and
# the baselines' cuBLAS, cuBLASLt and cuDNN too (sandbox/cuda/library.c).
check-links: all
	@! ldd $(BUILD)/kforge $(BUILD)/kforge-worker | grep -E 'libcuda\.so|libcupti|libcublas|libcudnn' || \
	  { echo "error: a binary links libcuda, libcupti, cuBLAS or cuDNN" >&2; exit 1; }

clean:
	rm -rf build

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
