# tcnla build. `make` builds build/libtcnla.a, build/libtcnla.so, build/tcnla
# and the CPU test runner. The CUDA backend is compiled in when nvcc is found
# (override with CUDA=0/1); the library still runs on machines without a GPU.
#
#   make            library, command, tests
#   make test       CPU tests (what CI runs)
#   make test-gpu   GPU tests (needs a GPU; run on the GPU machine)
#   make bench      benchmark programs (bench/)
#   make demo       the main job on its built-in default input
#   make deps       install the Debian packages the build and tests need

CC        ?= gcc
CUDA_HOME ?= /usr/local/cuda
NVCC      ?= $(shell command -v nvcc 2>/dev/null || ls $(CUDA_HOME)/bin/nvcc 2>/dev/null)
CUDA      ?= $(if $(NVCC),1,0)
BUILD     ?= build
OPT       ?= -O2

CFLAGS_BASE = -std=c11 $(OPT) -g -Wall -Wextra -ffp-contract=off \
              -fno-fast-math -fPIC -fopenmp -D_GNU_SOURCE -Iinclude -Isrc
LIB_CFLAGS  = $(CFLAGS_BASE) -fvisibility=hidden -DTCNLA_BUILDING
LDLIBS      = -ltmglib -llapack -lblas -lgfortran -lm -fopenmp

# Hopper first; sm_80 SASS + PTX keeps Ampere and later working.
NVCC_ARCH  ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90a,code=sm_90a \
              -gencode arch=compute_80,code=compute_80
NVCCFLAGS   = -std=c++17 -O3 -g -lineinfo $(NVCC_ARCH) -Xcompiler -fPIC,-fvisibility=hidden \
              -Xcompiler -ffp-contract=off --fmad=true -DTCNLA_BUILDING -Iinclude -Isrc

LIB_C  := $(sort $(wildcard src/*/*.c src/*/*/*.c))
LIB_CU :=
ifeq ($(CUDA),1)
  LIB_CU   := $(sort $(wildcard src/*/*/*.cu src/*/*/*/*.cu))
  LIB_CFLAGS += -DTCNLA_HAVE_CUDA -I$(CUDA_HOME)/include
  LDLIBS   += -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcublas -lcublasLt -lcusolver \
              -lcurand -lcudart_static -ldl -lrt -lpthread -lstdc++
else
  LIB_C    := $(filter-out src/backend/cuda/%,$(LIB_C))
endif

LIB_OBJ  := $(LIB_C:%.c=$(BUILD)/obj/%.o) $(LIB_CU:%.cu=$(BUILD)/obj/%.o)
APP_SRC  := $(sort $(wildcard app/io/*.c app/testmat/*.c app/analysis/*.c))
APP_OBJ  := $(APP_SRC:%.c=$(BUILD)/obj/%.o)
TOOL_SRC := $(sort $(wildcard app/cli/*.c))
TOOL_OBJ := $(TOOL_SRC:%.c=$(BUILD)/obj/%.o)
TEST_SRC := $(sort $(wildcard tests/*.c))
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/obj/%.o)
GTEST_SRC := $(sort $(wildcard tests/gpu/*.c))
GTEST_OBJ := $(GTEST_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/tests/runner.o $(BUILD)/obj/tests/util.o

.PHONY: all lib test test-gpu bench demo deps clean
all: lib $(BUILD)/tcnla $(BUILD)/run_tests

lib: $(BUILD)/libtcnla.a $(BUILD)/libtcnla.so

LIB_HDR := $(wildcard include/*.h src/*/*.h src/*/*/*.h src/*/*/*/*.h)
$(BUILD)/obj/src/%.o: src/%.c $(LIB_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -c $< -o $@

$(BUILD)/obj/src/%.o: src/%.cu $(LIB_HDR) $(wildcard src/*/*/*/*.cuh)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -c $< -o $@

$(BUILD)/obj/app/%.o $(BUILD)/obj/tests/%.o $(BUILD)/obj/bench/%.o: CFLAGS_X = $(CFLAGS_BASE) -Iapp $(if $(filter 1,$(CUDA)),-DTCNLA_HAVE_CUDA -I$(CUDA_HOME)/include)
$(BUILD)/obj/%.o: %.c $(LIB_HDR) $(wildcard app/*/*.h tests/*.h tests/*/*.h bench/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_X) -c $< -o $@

$(BUILD)/libtcnla.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/libtcnla.so: $(LIB_OBJ)
	$(CC) $(LDFLAGS) -shared -o $@ $^ $(LDLIBS)

# the application's support library (file I/O, test matrices, format
# analysis): the command, the tests and the benchmarks use it, libtcnla does not
$(BUILD)/libtcnla_app.a: $(APP_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/tcnla: $(TOOL_OBJ) $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a
	$(CC) $(LDFLAGS) -o $@ $(TOOL_OBJ) $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a $(LDLIBS)

$(BUILD)/run_tests: $(TEST_OBJ) $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a
	$(CC) $(LDFLAGS) -o $@ $(TEST_OBJ) $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a $(LDLIBS) -lmpfr -lgmp

$(BUILD)/run_gpu_tests: $(GTEST_OBJ) $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a
	$(CC) $(LDFLAGS) -o $@ $(GTEST_OBJ) $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a $(LDLIBS)

$(BUILD)/.deps: scripts/deps.sh
	@mkdir -p $(BUILD)
	bash scripts/deps.sh && touch $@

deps: $(BUILD)/.deps

# the CLI tests run the tcnla of this build ($(BUILD) may be relative or absolute)
test: $(BUILD)/.deps
	$(MAKE) $(BUILD)/run_tests $(BUILD)/tcnla
	TCNLA_BIN=$(abspath $(BUILD))/tcnla $(abspath $(BUILD))/run_tests $(T)

test-gpu: $(BUILD)/run_gpu_tests
	$(abspath $(BUILD))/run_gpu_tests $(T)

demo: $(BUILD)/.deps
	$(MAKE) $(BUILD)/tcnla
	./$(BUILD)/tcnla rsvd

clean:
	rm -rf $(BUILD)

# ------------------------------------------------------------------ bench
# build/bench_gemm times every GEMM method against
# the cuBLAS baselines on the GPU and appends CSV rows to
# bench/results/gemm.csv (see `build/bench_gemm --help`); bench/plot_gemm.py
# draws bench/results/gemm.png from them. Needs CUDA=1 and a GPU to run.
bench: $(BUILD)/bench_gemm $(BUILD)/bench_rsvd

$(BUILD)/bench_gemm: $(BUILD)/obj/bench/gemm.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a
	$(CC) -o $@ $(BUILD)/obj/bench/gemm.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a $(LDLIBS)

# bench/rsvd.c: tcnla_rsvd against cusolverDnXgesvdr and the FP32 pipeline.
$(BUILD)/bench_rsvd: $(BUILD)/obj/bench/rsvd.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a
	$(CC) -o $@ $(BUILD)/obj/bench/rsvd.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a $(LDLIBS)

# bench/lra.c: randomized LRA variants [Baboulin et al. 2024] against the FP32 baseline.
bench: $(BUILD)/bench_lra
$(BUILD)/bench_lra: $(BUILD)/obj/bench/lra.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a
	$(CC) $(LDFLAGS) -o $@ $(BUILD)/obj/bench/lra.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a $(LDLIBS)

# bench/hosvd.c: RP-HOSVD variants ([Ootomo & Yokota 2023] section 5.2) against the FP32 baseline.
bench: $(BUILD)/bench_hosvd
$(BUILD)/bench_hosvd: $(BUILD)/obj/bench/hosvd.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a
	$(CC) $(LDFLAGS) -o $@ $(BUILD)/obj/bench/hosvd.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a $(LDLIBS)

# build/bench_ozaki (Ozaki scheme on the GPU) runs [Mukunoki et al. 2020] Table 1
# (cuBLAS DGEMM, cuBLAS fixed-point emulation, OZAKI_FP16 / OZAKI_INT8 in DP
# and CR modes, phi = 0.1, 1, 2) and appends to bench/results/ozaki.csv;
# bench/plot_ozaki.py draws bench/results/ozaki.png. Needs CUDA=1 and a GPU.
bench: $(BUILD)/bench_ozaki
$(BUILD)/bench_ozaki: $(BUILD)/obj/bench/ozaki.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a
	$(CC) -o $@ $(BUILD)/obj/bench/ozaki.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a $(LDLIBS)

# bench/kernels.c: [Baboulin et al. 2024] Fig. 1 (bench/reproduce/baboulin2024_fig1.sh); bench/proj_mantissa.c:
# [Ootomo & Yokota 2023] Fig. 3 (CPU, FP64; bench/reproduce/ootomo2023_fig3.sh). Both also build with CUDA=0.
bench: $(BUILD)/bench_kernels $(BUILD)/bench_proj_mantissa
$(BUILD)/bench_kernels: $(BUILD)/obj/bench/kernels.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a
	$(CC) $(LDFLAGS) -o $@ $(BUILD)/obj/bench/kernels.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a $(LDLIBS)
$(BUILD)/bench_proj_mantissa: $(BUILD)/obj/bench/proj_mantissa.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a
	$(CC) $(LDFLAGS) -o $@ $(BUILD)/obj/bench/proj_mantissa.o $(BUILD)/libtcnla_app.a $(BUILD)/libtcnla.a $(LDLIBS)
