# tcnla build. `make` builds build/libtcnla.a, build/libtcnla.so, build/tcnla
# and the CPU test runner. The CUDA backend is compiled in when nvcc is found
# (override with CUDA=0/1); the library still runs on machines without a GPU.
#
#   make            library, command, tests
#   make test       CPU tests (what CI runs; includes tests/install_check.sh)
#   make test-python  the Python package: fresh venv, pip install ., pytest (CPU)
#   make CUDA=0 BUILD=build-asan SAN=1 test
#                   the same under AddressSanitizer + UndefinedBehaviorSanitizer
#                   (its own build folder; .ci/run runs it)
#   make test-gpu   GPU tests, then tests/gpu/sanitize.sh (compute-sanitizer
#                   over the range-check / fallback / scaling paths; GPU_SAN=0
#                   or a filter T=... leaves it out). Needs a GPU; with CUDA=0
#                   the GPU test runner builds and reports every test skipped
#   make test-gpu-sanitize  the compute-sanitizer pass alone
#   make bench      benchmark programs (bench/)
#   make interpose  libtcnla_cublas.so (LD_PRELOAD, docs/interpose.md), its GPU
#                   test program and C benchmark (CUDA=1)
#   make demo       the main job on its built-in default input
#   make deps       install the Debian packages the build and tests need
#   make install    PREFIX=/usr/local (and DESTDIR): include/tcnla.h,
#                   lib/libtcnla.so.$(VERSION) (+ libtcnla.so.0, libtcnla.so),
#                   lib/libtcnla.a, lib/pkgconfig/tcnla.pc, bin/tcnla,
#                   include/tcnla_cublas.h (+ lib/libtcnla_cublas.so, CUDA);
#                   installs what `make` built, never rebuilds
#   make uninstall  PREFIX=... (and DESTDIR): removes exactly those files

CC        ?= gcc
CUDA_HOME ?= /usr/local/cuda
NVCC      ?= $(shell command -v nvcc 2>/dev/null || ls $(CUDA_HOME)/bin/nvcc 2>/dev/null)
CUDA      ?= $(if $(NVCC),1,0)
BUILD     ?= build
OPT       ?= -O2
# SAN=1: AddressSanitizer + UndefinedBehaviorSanitizer (any undefined
# behaviour aborts), for the host code (C) of everything built; use it with
# its own BUILD folder
SAN       ?= 0
ifeq ($(SAN),1)
  OPT     := -O1
  SAN_FLAGS = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
endif

CFLAGS_BASE = -std=c11 $(OPT) -g -Wall -Wextra -ffp-contract=off \
              -fno-fast-math -fPIC -fopenmp -D_GNU_SOURCE -Iinclude $(SAN_FLAGS)
# only the library sees its private headers (src/); the application, the CPU
# tests and the benchmarks see include/tcnla.h and app/*/*.h (-Iapp)
LIB_CFLAGS  = $(CFLAGS_BASE) -Isrc -fvisibility=hidden -DTCNLA_BUILDING
# what libtcnla itself links (the .pc's Libs.private); the application, the
# tests and the benchmarks add LAPACK's test-matrix library (app/testmat:
# slatms) and whatever they call themselves
LIB_LDLIBS  = -llapack -lblas -lgfortran -lm -lpthread -fopenmp $(SAN_FLAGS)
APP_LDLIBS  = -ltmglib -ldl
BENCH_LDLIBS =

VERSION   := $(shell sed -n 's/^\#define TCNLA_VERSION_STRING "\(.*\)"/\1/p' include/tcnla.h)
SOVERSION := $(firstword $(subst ., ,$(VERSION)))
PREFIX    ?= /usr/local
DESTDIR   ?=

# Hopper first; sm_80 SASS + PTX keeps Ampere and later working.
NVCC_ARCH  ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90a,code=sm_90a \
              -gencode arch=compute_80,code=compute_80
NVCCFLAGS   = -std=c++17 -O3 -g -lineinfo $(NVCC_ARCH) -Xcompiler -fPIC,-fvisibility=hidden \
              -Xcompiler -ffp-contract=off --fmad=true -DTCNLA_BUILDING -Iinclude -Isrc

# src/**/test_*.c: white-box tests of library internals, beside the code they
# test; compiled into build/run_tests only, never into libtcnla
# (test_gpu_*.c: those that need a GPU, in build/run_gpu_tests instead)
WB_GPU := $(sort $(wildcard src/*/test_gpu_*.c src/*/*/test_gpu_*.c))
WB_SRC := $(filter-out $(WB_GPU),$(sort $(wildcard src/*/test_*.c src/*/*/test_*.c)))
LIB_C  := $(filter-out $(WB_SRC) $(WB_GPU),$(sort $(wildcard src/*/*.c src/*/*/*.c)))
LIB_CU :=
ifeq ($(CUDA),1)
  LIB_CU   := $(sort $(wildcard src/*/*/*.cu src/*/*/*/*.cu))
  LIB_CFLAGS += -DTCNLA_HAVE_CUDA -I$(CUDA_HOME)/include -DTCNLA_CUDA_LIBDIR='"$(CUDA_HOME)/lib64"'
  # the CUDA runtime, shared; cuBLAS, cuBLASLt and cuSOLVER are not linked:
  # src/backend/cuda/cuda_libs.c dlopens them at run time
  LIB_LDLIBS += -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart -ldl -lpthread -lstdc++
  # the benchmarks time cuBLAS / cuSOLVER baselines themselves
  BENCH_LDLIBS += -lcublas -lcusolver -lcurand
else
  LIB_C    := $(filter-out src/backend/cuda/%,$(LIB_C))
  WB_SRC   := $(filter-out src/backend/cuda/%,$(WB_SRC))
endif

LIB_OBJ  := $(LIB_C:%.c=$(BUILD)/obj/%.o) $(LIB_CU:%.cu=$(BUILD)/obj/%.o)
LDLIBS_APP = $(APP_LDLIBS) $(LIB_LDLIBS)
LDLIBS_BENCH = $(BENCH_LDLIBS) $(LDLIBS_APP)
APP_SRC  := $(sort $(wildcard app/io/*.c app/testmat/*.c app/analysis/*.c))
APP_OBJ  := $(APP_SRC:%.c=$(BUILD)/obj/%.o)
TOOL_SRC := $(sort $(wildcard app/cli/*.c))
TOOL_OBJ := $(TOOL_SRC:%.c=$(BUILD)/obj/%.o)
TEST_SRC := $(sort $(wildcard tests/*.c))
WB_OBJ   := $(WB_SRC:%.c=$(BUILD)/obj/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/obj/%.o) $(WB_OBJ)
GTEST_SRC := $(sort $(wildcard tests/gpu/*.c)) $(WB_GPU)
GTEST_OBJ := $(GTEST_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/tests/runner.o $(BUILD)/obj/tests/util.o
ifneq ($(CUDA),1)
  # without the CUDA backend the GPU tests cannot compile: the runner gets one
  # test per TEST(name) of their sources, each reporting itself skipped
  GTEST_OBJ := $(BUILD)/obj/gpu_tests_skipped.o $(BUILD)/obj/tests/runner.o $(BUILD)/obj/tests/util.o
endif

.PHONY: all lib test test-python test-gpu test-gpu-sanitize bench demo deps clean install uninstall
all: lib $(BUILD)/tcnla $(BUILD)/run_tests

lib: $(BUILD)/libtcnla.a $(BUILD)/libtcnla.so

LIB_HDR := $(wildcard include/*.h src/*/*.h src/*/*/*.h src/*/*/*/*.h)
$(BUILD)/obj/src/%.o: src/%.c $(LIB_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -c $< -o $@

$(BUILD)/obj/src/%.o: src/%.cu $(LIB_HDR) $(wildcard src/*/*/*/*.cuh)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -c $< -o $@

# the white-box tests: the library's flags, the test harness and the app's headers
WB_GPU_OBJ := $(WB_GPU:%.c=$(BUILD)/obj/%.o)
$(WB_OBJ) $(WB_GPU_OBJ): LIB_CFLAGS += -Itests -Iapp
$(WB_OBJ) $(WB_GPU_OBJ): $(wildcard tests/*.h tests/gpu/*.h app/*/*.h)

$(BUILD)/obj/app/%.o $(BUILD)/obj/tests/%.o $(BUILD)/obj/bench/%.o: CFLAGS_X = $(CFLAGS_BASE) -Iapp $(if $(filter 1,$(CUDA)),-DTCNLA_HAVE_CUDA -I$(CUDA_HOME)/include)
$(BUILD)/obj/%.o: %.c $(LIB_HDR) $(wildcard app/*/*.h tests/*.h tests/*/*.h bench/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_X) -c $< -o $@

$(BUILD)/libtcnla.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# exports tcnla_* only (src/libtcnla.map), every symbol resolved at link
# time (a cuBLAS function missing from cuda_libs.h's table fails here); the
# .pc template records this build's Libs.private for `make install`
$(BUILD)/libtcnla.so: $(LIB_OBJ) src/libtcnla.map
	$(CC) $(LDFLAGS) -shared -Wl,-soname,libtcnla.so.$(SOVERSION) \
	    -Wl,--version-script=src/libtcnla.map -Wl,--no-undefined -o $@ $(LIB_OBJ) $(LIB_LDLIBS)
	ln -sf libtcnla.so $(BUILD)/libtcnla.so.$(SOVERSION)
	printf '%s\n' 'prefix=@PREFIX@' 'exec_prefix=$${prefix}' 'libdir=$${prefix}/lib' \
	    'includedir=$${prefix}/include' '' 'Name: tcnla' \
	    'Description: Tensor-Core numerical linear algebra (error-corrected SGEMM, Ozaki scheme DGEMM, randomized SVD)' \
	    'Version: $(VERSION)' 'Requires:' 'Cflags: -I$${includedir}' \
	    'Libs: -L$${libdir} -Wl,-rpath,$${libdir} -ltcnla' 'Libs.private: $(LIB_LDLIBS)' \
	    > $(BUILD)/tcnla.pc.in

# the application's support library (file I/O, test matrices, format
# analysis): the command, the tests and the benchmarks use it, libtcnla does not
$(BUILD)/libtcnla_app.a: $(APP_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/tcnla: $(TOOL_OBJ) $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a
	$(CC) $(LDFLAGS) -o $@ $(TOOL_OBJ) $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a $(LDLIBS_APP)

$(BUILD)/run_tests: $(TEST_OBJ) $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a
	$(CC) $(LDFLAGS) -o $@ $(TEST_OBJ) $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a $(LDLIBS_APP) -lmpfr -lgmp

$(BUILD)/run_gpu_tests: $(GTEST_OBJ) $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a
	$(CC) $(LDFLAGS) -o $@ $(GTEST_OBJ) $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a $(LDLIBS_APP)

$(BUILD)/gpu_tests_skipped.c: $(GTEST_SRC) Makefile
	@mkdir -p $(dir $@)
	{ echo '#include "test.h"'; \
	  echo 'static void skipped(void) { tt_skip("built with CUDA=0 (no CUDA backend)"); }'; \
	  for f in $(GTEST_SRC); do \
	    sed -n "s|^TEST(\([A-Za-z0-9_]*\)).*|__attribute__((constructor)) static void reg_\1(void) { tt_register(\"\1\", \"$$f\", skipped); }|p" $$f; \
	  done; } > $@
$(BUILD)/obj/gpu_tests_skipped.o: $(BUILD)/gpu_tests_skipped.c tests/test.h
	$(CC) $(CFLAGS_BASE) -Itests -c $< -o $@

$(BUILD)/.deps: scripts/deps.sh
	@mkdir -p $(BUILD)
	bash scripts/deps.sh && touch $@

deps: $(BUILD)/.deps

# the CLI tests run the tcnla of this build ($(BUILD) may be relative or absolute);
# the install test (tests/install_check.sh) installs its libtcnla.so and libtcnla.a
# (SAN=1: any sanitizer report fails the test that caused it, or the run;
# the installed example of tests/install_check.sh is not instrumented, hence
# verify_asan_link_order=0; a report exits 86 / 87, statuses tcnla never
# gives, so that a test expecting the command to fail is not satisfied by one)
SAN_ENV = ASAN_OPTIONS=$${ASAN_OPTIONS:-exitcode=86:detect_leaks=1:verify_asan_link_order=0:detect_stack_use_after_return=1} \
          UBSAN_OPTIONS=$${UBSAN_OPTIONS:-exitcode=87:print_stacktrace=1:halt_on_error=1}
test: $(BUILD)/.deps
	$(MAKE) $(BUILD)/run_tests $(BUILD)/tcnla $(BUILD)/libtcnla.so $(IP_SO)
	$(if $(filter 1,$(SAN)),$(SAN_ENV)) TCNLA_BIN=$(abspath $(BUILD))/tcnla $(abspath $(BUILD))/run_tests $(T)

# the Python package: a fresh venv, pip install ., the CPU pytest suite
# (tests/python_check.sh; needs python3-venv and PyPI)
test-python: $(BUILD)/.deps
	$(MAKE) $(BUILD)/libtcnla.so
	TCNLA_BUILD=$(BUILD) bash tests/python_check.sh

# the GPU tests, then (without a filter T, with CUDA=1, unless GPU_SAN=0)
# the compute-sanitizer pass of tests/gpu/sanitize.sh
GPU_SAN ?= 1
test-gpu: $(BUILD)/run_gpu_tests
	$(abspath $(BUILD))/run_gpu_tests $(T)
	$(if $(filter 1,$(CUDA)),$(if $(filter 1,$(GPU_SAN)),$(if $(T),,bash tests/gpu/sanitize.sh -b $(BUILD))))

test-gpu-sanitize: $(BUILD)/run_gpu_tests
	bash tests/gpu/sanitize.sh -b $(BUILD)

demo: $(BUILD)/.deps
	$(MAKE) $(BUILD)/tcnla
	./$(BUILD)/tcnla rsvd

clean:
	rm -rf $(BUILD)

# ---------------------------------------------------------------- install
# Copies what `make` built into $(DESTDIR)$(PREFIX) (no prerequisites, so
# nothing is rebuilt; run `make` first). The .pc's Libs carries an rpath to
# $(PREFIX)/lib, so programs built with `pkg-config --libs tcnla` find
# libtcnla.so.$(SOVERSION) without LD_LIBRARY_PATH.
INSTALL_FILES = include/tcnla.h lib/libtcnla.so.$(VERSION) lib/libtcnla.so.$(SOVERSION) \
                lib/libtcnla.so lib/libtcnla.a lib/pkgconfig/tcnla.pc bin/tcnla \
                include/tcnla_cublas.h lib/libtcnla_cublas.so
install:
	@for f in $(BUILD)/libtcnla.so $(BUILD)/libtcnla.a $(BUILD)/tcnla $(BUILD)/tcnla.pc.in; do \
	    test -f $$f || { echo "install: $$f is missing: run make first" >&2; exit 1; }; done
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin
	install -m 644 include/tcnla.h $(DESTDIR)$(PREFIX)/include/tcnla.h
	install -m 755 $(BUILD)/libtcnla.so $(DESTDIR)$(PREFIX)/lib/libtcnla.so.$(VERSION)
	ln -sf libtcnla.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libtcnla.so.$(SOVERSION)
	ln -sf libtcnla.so.$(SOVERSION) $(DESTDIR)$(PREFIX)/lib/libtcnla.so
	install -m 644 $(BUILD)/libtcnla.a $(DESTDIR)$(PREFIX)/lib/libtcnla.a
	sed 's|@PREFIX@|$(PREFIX)|' $(BUILD)/tcnla.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/tcnla.pc
	install -m 755 $(BUILD)/tcnla $(DESTDIR)$(PREFIX)/bin/tcnla
	install -m 644 include/tcnla_cublas.h $(DESTDIR)$(PREFIX)/include/tcnla_cublas.h
	if [ -f $(BUILD)/libtcnla_cublas.so ]; then \
	    install -m 755 $(BUILD)/libtcnla_cublas.so $(DESTDIR)$(PREFIX)/lib/libtcnla_cublas.so; fi

uninstall:
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/,$(INSTALL_FILES))

# ------------------------------------------------------ cuBLAS interposition
# build/libtcnla_cublas.so (interpose/, docs/interpose.md): the LD_PRELOAD
# library that computes an unmodified program's FP32 / FP64 cuBLAS and
# cuBLASLt GEMMs with tcnla; CUDA builds only. It loads libtcnla.so.$(SOVERSION)
# from its own directory at run time (dlopen, RTLD_LOCAL) and links the static
# CUDA runtime (its symbols local), so that nothing it needs enters the
# program's global symbol scope. `make interpose` adds its GPU test program
# and the C benchmark program (linked with cuBLAS as any program is).
IP_SO :=
ifeq ($(CUDA),1)
IP_SO   := $(BUILD)/libtcnla_cublas.so
IP_OBJ  := $(patsubst %.c,$(BUILD)/obj/%.o,$(sort $(wildcard interpose/*.c))) \
           $(BUILD)/obj/interpose/epilogue.o
IP_HDR  := interpose/internal.h include/tcnla.h include/tcnla_cublas.h
$(BUILD)/obj/interpose/%.o: interpose/%.c $(IP_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -fvisibility=hidden -I$(CUDA_HOME)/include -c $< -o $@
$(BUILD)/obj/interpose/epilogue.o: interpose/epilogue.cu $(IP_HDR)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -I$(CUDA_HOME)/include -Xcompiler -fno-exceptions,-fno-threadsafe-statics \
	    -c $< -o $@
$(IP_SO): $(IP_OBJ) interpose/libtcnla_cublas.map $(BUILD)/libtcnla.so
	$(CC) $(LDFLAGS) -shared -Wl,--version-script=interpose/libtcnla_cublas.map \
	    -Wl,--no-undefined -o $@ $(IP_OBJ) $(CUDA_HOME)/lib64/libcudart_static.a \
	    -ldl -lpthread -lrt
lib: $(IP_SO)
IP_PROG_LIBS = -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcublasLt -lcublas -lcudart \
               -ldl -lpthread -lm
$(BUILD)/interpose_gpu_check: interpose/tests/gpu_check.c include/tcnla_cublas.h
	$(CC) $(CFLAGS_BASE) -I$(CUDA_HOME)/include -o $@ $< $(IP_PROG_LIBS)
$(BUILD)/libinterpose_gpu_check.so: interpose/tests/gpu_check.c include/tcnla_cublas.h
	$(CC) $(CFLAGS_BASE) -DGPU_CHECK_LIB -shared -I$(CUDA_HOME)/include -o $@ $< $(IP_PROG_LIBS)
$(BUILD)/interpose_local_loader: interpose/tests/local_loader.c
	$(CC) $(CFLAGS_BASE) -o $@ $< -ldl
$(BUILD)/bench_interpose_dgemm: bench/interpose/dgemm.c
	$(CC) $(CFLAGS_BASE) -I$(CUDA_HOME)/include -o $@ $< $(IP_PROG_LIBS)
endif
.PHONY: interpose
interpose: $(IP_SO) $(if $(IP_SO),$(BUILD)/interpose_gpu_check $(BUILD)/libinterpose_gpu_check.so \
           $(BUILD)/interpose_local_loader $(BUILD)/bench_interpose_dgemm)

# ------------------------------------------------------------------ bench
# build/bench_gemm times every GEMM method against the cuBLAS baselines on
# the GPU and appends CSV rows to
# bench/results/gemm.csv (see `build/bench_gemm --help`); bench/plot_gemm.py
# draws bench/results/gemm.png from them. Needs CUDA=1 and a GPU to run.
bench: $(BUILD)/bench_gemm $(BUILD)/bench_rsvd

$(BUILD)/bench_gemm: $(BUILD)/obj/bench/gemm.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a
	$(CC) -o $@ $(BUILD)/obj/bench/gemm.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a $(LDLIBS_BENCH)

# bench/rsvd.c: tcnla_rsvd against cusolverDnXgesvdr and the FP32 pipeline.
$(BUILD)/bench_rsvd: $(BUILD)/obj/bench/rsvd.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a
	$(CC) -o $@ $(BUILD)/obj/bench/rsvd.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a $(LDLIBS_BENCH)

# bench/small_svd.c: the small SVD's GPU paths (eigensolution, one-sided Jacobi, gesvdj)
# at l = 266, 512, 1024 (internal entry points: src/ and tests/ headers).
bench: $(BUILD)/bench_small_svd
$(BUILD)/obj/bench/small_svd.o: CFLAGS_X += -Isrc -Itests
$(BUILD)/bench_small_svd: $(BUILD)/obj/bench/small_svd.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a
	$(CC) $(LDFLAGS) -o $@ $(BUILD)/obj/bench/small_svd.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a $(LDLIBS_BENCH)

# bench/fixed_costs.c: the trust check and the Cholesky factorization of
# CholeskyQR alone (internal entry points: src/ headers); bench/fixed_costs_run.sh.
bench: $(BUILD)/bench_fixed_costs
$(BUILD)/obj/bench/fixed_costs.o: CFLAGS_X += -Isrc
$(BUILD)/bench_fixed_costs: $(BUILD)/obj/bench/fixed_costs.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a
	$(CC) $(LDFLAGS) -o $@ $(BUILD)/obj/bench/fixed_costs.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a $(LDLIBS_BENCH)

# bench/lra.c: randomized LRA variants [Baboulin et al. 2024] against the FP32 baseline.
bench: $(BUILD)/bench_lra
$(BUILD)/bench_lra: $(BUILD)/obj/bench/lra.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a
	$(CC) $(LDFLAGS) -o $@ $(BUILD)/obj/bench/lra.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a $(LDLIBS_BENCH)

# bench/hosvd.c: RP-HOSVD variants ([Ootomo & Yokota 2023] section 5.2) against the
# FP32 baseline.
bench: $(BUILD)/bench_hosvd
$(BUILD)/bench_hosvd: $(BUILD)/obj/bench/hosvd.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a
	$(CC) $(LDFLAGS) -o $@ $(BUILD)/obj/bench/hosvd.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a $(LDLIBS_BENCH)

# build/bench_ozaki (Ozaki scheme DGEMM on the GPU) runs Table 1 of
# [Mukunoki et al. 2020] (cuBLAS DGEMM, cuBLAS fixed-point emulation, OZAKI_FP16 / OZAKI_INT8 in DP
# and CR modes, phi = 0.1, 1, 2) and appends to bench/results/ozaki.csv;
# bench/plot_ozaki.py draws bench/results/ozaki.png. Needs CUDA=1 and a GPU.
bench: $(BUILD)/bench_ozaki
$(BUILD)/bench_ozaki: $(BUILD)/obj/bench/ozaki.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a
	$(CC) -o $@ $(BUILD)/obj/bench/ozaki.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a $(LDLIBS_BENCH)

# bench/ozaki/fused.c: scheme II's residue products, cuBLASLt + reduction
# against the fused sm_90a kernel, and the whole DGEMM through both
# (bench/ozaki/fused_run.sh; bench/results/ozaki_fused.csv). Needs CUDA=1.
bench: $(BUILD)/bench_oz2_fused
$(BUILD)/obj/bench/ozaki/fused.o: CFLAGS_X += -Isrc -Itests
$(BUILD)/bench_oz2_fused: $(BUILD)/obj/bench/ozaki/fused.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a
	$(CC) $(LDFLAGS) -o $@ $(BUILD)/obj/bench/ozaki/fused.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a $(LDLIBS_BENCH)

# bench/ozaki/mem.c: scheme II's memory-bound kernels (plan passes, residues,
# reconstruction) alone, GB/s (bench/ozaki/mem_run.sh). Needs CUDA=1 and a GPU.
bench: $(BUILD)/bench_ozaki_mem
$(BUILD)/obj/bench/ozaki/mem.o: CFLAGS_X += -Isrc
$(BUILD)/bench_ozaki_mem: $(BUILD)/obj/bench/ozaki/mem.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a
	$(CC) $(LDFLAGS) -o $@ $(BUILD)/obj/bench/ozaki/mem.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a $(LDLIBS_BENCH)

# bench/ozaki/range_bounds.c: how many bits of scheme II's budget range bounds
# tighter than Cauchy-Schwarz would give back (CPU; also with CUDA=0).
bench: $(BUILD)/bench_oz2_range_bounds
$(BUILD)/obj/bench/ozaki/range_bounds.o: CFLAGS_X += -Isrc
$(BUILD)/bench_oz2_range_bounds: $(BUILD)/obj/bench/ozaki/range_bounds.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a
	$(CC) $(LDFLAGS) -o $@ $(BUILD)/obj/bench/ozaki/range_bounds.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a $(LDLIBS_APP)

# bench/ozaki/dp_target.c: scheme II's error against its bit budget beside the
# native dot product's (CPU; also with CUDA=0).
bench: $(BUILD)/bench_oz2_dp_target
$(BUILD)/obj/bench/ozaki/dp_target.o: CFLAGS_X += -Isrc
$(BUILD)/bench_oz2_dp_target: $(BUILD)/obj/bench/ozaki/dp_target.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a
	$(CC) $(LDFLAGS) -o $@ $(BUILD)/obj/bench/ozaki/dp_target.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a $(LDLIBS_APP)

# bench/kernels.c: Fig. 1 of [Baboulin et al. 2024] (bench/reproduce/baboulin2024_fig1.sh);
# bench/proj_mantissa.c: Fig. 3 of [Ootomo & Yokota 2023] (CPU, FP64;
# bench/reproduce/ootomo2023_fig3.sh). Both also build with CUDA=0.
bench: $(BUILD)/bench_kernels $(BUILD)/bench_proj_mantissa
$(BUILD)/bench_kernels: $(BUILD)/obj/bench/kernels.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a
	$(CC) $(LDFLAGS) -o $@ $(BUILD)/obj/bench/kernels.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a $(LDLIBS_BENCH)
$(BUILD)/bench_proj_mantissa: $(BUILD)/obj/bench/proj_mantissa.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a
	$(CC) $(LDFLAGS) -o $@ $(BUILD)/obj/bench/proj_mantissa.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a $(LDLIBS_BENCH)
