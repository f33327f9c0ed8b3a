# The commands a newcomer needs: `make demo` and `make test`.
JOBS ?= 2
BUILD ?= build
CMAKE_FLAGS ?=
CCACHE := $(shell command -v ccache 2>/dev/null)
ifneq ($(CCACHE),)
  CMAKE_FLAGS += -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
  # Paths under the checkout are hashed relative to the build directory, so
  # the scalar-only build's unity sources (build-scalar/CMakeFiles/...) hit
  # the objects of the first build's (build/CMakeFiles/...).
  export CCACHE_BASEDIR ?= $(CURDIR)
endif
FORMAT_FILES = $(shell git ls-files '*.cpp' '*.h')

.PHONY: docs all setup configure build demo verify-demo test sanitize-configure sanitize tsan fuzz scalar-test cross-build-check cpu-check cross-arch-check bench bench-python gpu-check gpu-bundle format format-check clean

all: build

setup:
	@scripts/setup

configure: setup
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# The main job: `ditto train` on Fashion-MNIST, then the same short training
# with other thread and worker counts, to the same bits (scripts/demo).
demo: configure
	cmake --build $(BUILD) -j $(JOBS) --target ditto_cli
	scripts/demo $(BUILD)

# ditto verify's demonstration (docs/verify.md): the first op where two
# nondeterministic runs diverge, then two identical deterministic runs.
verify-demo: configure
	cmake --build $(BUILD) -j $(JOBS) --target ditto_cli
	scripts/verify_demo $(BUILD)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The sanitizer builds compile at -O1 (the flags below): half the compile
# time of -O3, which is most of these steps' time, for slower tests; the
# bits do not depend on the optimization level (docs/design.md §2: no
# contraction, no fast-math), so the suites' bit tests hold at -O1 too.
# Line tables only (the sanitizers' reports name file and line): a tenth
# less compile time than full -g.
SANITIZER_FLAGS = -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG"

# Every test and every fuzz target under AddressSanitizer +
# UndefinedBehaviorSanitizer, from one clang build (DITTO_SANITIZE=fuzz:
# ASan+UBSan with libFuzzer's coverage hooks), so that `make sanitize` and
# `make fuzz` compile the library once between them. The hooks are only in
# the parsers and state loaders the fuzz targets drive
# (fuzz/coverage_allowlist.txt): in a kernel's loop they cost the
# sanitized suite a factor of 4.6 (CI time, 2026-12-05).
# The Python package and ditto::distributed are built too (issue 61): the
# suite's `python` test runs the hostile-input cases under ASan (its note in
# tests/CMakeLists.txt) and the MPI tests run under mpirun, less the
# trainings SANITIZE_SKIP names.
SANITIZE_BUILD = build-sanitize
sanitize-configure: setup
	@scripts/setup --fuzz
	CC=clang CXX=clang++ cmake -S . -B $(SANITIZE_BUILD) $(SANITIZER_FLAGS) \
	  -DDITTO_SANITIZE=fuzz -DDITTO_BUILD_EXAMPLES=OFF -DDITTO_BUILD_PYTHON=ON \
	  -DDITTO_BUILD_DISTRIBUTED=ON $(CMAKE_FLAGS)

# Not run under the sanitizers: five tests whose length is repetition or
# scale, not code (about 260 s of CPU under ASan): bits over long trainings
# repeated with other thread and worker counts, and reductions of 2^28-element
# views. Every path they take, shorter tests of the sanitizer suite take
# (TrainCli's resumes and checkpoints, NnGolden's AdamW CNN, the op suite's
# reductions of views); the release, scalar-only and AVX2 suites run them.
# Nor test_device: its shaders run in the Vulkan driver's JIT code (lavapipe),
# which the sanitizers do not instrument; make test and scalar-test run it.
# Nor (2026-11-27, CI time) three more of that kind, about 130 s of CPU
# under ASan: the fingerprint sweep (every record's samples, which the op
# suite runs under the sanitizers), NnGolden's AdamW CNN (the AdamW MLP and
# the trainer's tests keep its code) and the benchmark-replay resume (the
# tuning cache's load and replay run in test_ops' Conv tests).
# Nor (2026-11-27, session 18: the CI ran 2,960 s cold) six more, about
# 140 s of CPU under ASan: four TrainCli runs whose cost is the sanitized
# trainer training again (a kill during a save, a checkpoint read by Python,
# a resume at every step, the JSON/quiet output: their file and parse paths
# run in the remaining TrainCli tests and the fuzz targets), conv3d's
# wide-channel chain (the narrower Conv3dGolden chains take the same code)
# and the million-node autograd chain (ADeepChainIsFreedAfterBackward keeps
# the iterative release).
# Nor (2026-11-28, session 21, CI time) Linalg's every-capability-and-
# thread-count chain, about 35 s of CPU under ASan: repetition of the
# products the op suite and EveryBlockingComputesTheSameChain run there.
# Nor (2026-12-04, issue 61: the MPI tests joined the sanitizer suite) the
# two MPI trainings, 64 s and 19 s under ASan: the same trainings on 1 to
# 4 ranks compared by fingerprint; the collectives they call run in
# distributed_np1..4 and the rank-failure tests under ASan.
# Nor (2026-12-05, CI time: the sanitize step took 921 s here, 310 s of
# it tests) the CLI's GPT training run three times and resumed, 46 s under
# ASan: repetition; the Gpt tests of test_nn run the model, its cache and
# generation under the sanitizers, and the remaining TrainCli tests the
# CLI's checkpoint and resume paths.
SANITIZE_SKIP = ^TrainCli\.GptTrainsAndGeneratesWithOneFingerprint$$|^Linalg\.EveryCapabilityAndThreadCountComputesTheChain$$|^train_golden$$|^BadInput\.ReductionsOfLargeViews|^NnGolden\.CnnSgdMomentum|^TrainCli\.TwoRunsThreadsAndWorkers|^Verify\.TrainThreadsWorkersAndResume|^fingerprint_golden$$|^NnGolden\.CnnAdamWOneCycle|^TrainCli\.ResumeWithBenchmarkReplays|^TrainCli\.KillDuringASaveLeavesThePreviousCheckpoint$$|^TrainCli\.CheckpointFilesRoundTripThroughPython$$|^TrainCli\.ResumeAtAnyStepEqualsTheStraightRun$$|^TrainCli\.JsonAndQuietOutput$$|^Conv3dGolden\.WideChannelsAreTheSerialChainToo$$|^AutogradLifetime\.AMillionOpChainIsFreedWithoutRecursion$$|^distributed_train_same_bits$$|^distributed_same_bits$$

sanitize: sanitize-configure
	cmake --build $(SANITIZE_BUILD) -j $(JOBS)
	cd $(SANITIZE_BUILD) && ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
	  UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS) -LE 'install|test_device' -E '$(SANITIZE_SKIP)'

# The parallel and threading tests under ThreadSanitizer (test_parallel
# holds the backward passes on several threads into one leaf), built with
# clang (which compiled a sanitized file here in about a third less time
# than g++: ops/index/scatter.cpp with ASan, 22 s against 34 s).
tsan: setup
	@scripts/setup --fuzz
	CC=clang CXX=clang++ cmake -S . -B build-tsan $(SANITIZER_FLAGS) -DDITTO_SANITIZE=tsan \
	  -DDITTO_BUILD_EXAMPLES=OFF -DDITTO_BUILD_PYTHON=OFF -DDITTO_BUILD_DISTRIBUTED=OFF $(CMAKE_FLAGS)
	cmake --build build-tsan -j $(JOBS) --target test_parallel test_ops test_random test_data
	cd build-tsan && TSAN_OPTIONS=halt_on_error=1:allocator_may_return_null=1 ctest --output-on-failure \
	  -j $(JOBS) -L 'test_parallel|test_ops|test_random|test_data' -E 'OpSuite\.'

# The libFuzzer targets (fuzz/), FUZZ_SECONDS each, two at a time, in the
# sanitizer build (the corpora grow in $(SANITIZE_BUILD)/corpus across runs).
FUZZ_SECONDS ?= 60
fuzz: sanitize-configure
	cmake --build $(SANITIZE_BUILD) -j $(JOBS) --target fuzz_targets
	scripts/run_fuzz $(SANITIZE_BUILD) $(FUZZ_SECONDS)

# The scalar-only build (DITTO_SIMD=scalar) and the whole suite.
# Not run in the scalar build: two tests whose length is repetition (the
# same training run again with other thread and worker counts, about 100 s
# of CPU on scalar kernels). The scalar kernels' thread invariance is the op
# suite's (1, 2, 3 and 8 threads), the loader's worker invariance does not
# depend on the kernels, and the fingerprint sweep's training steps hold the
# scalar build to the full build's bits. Nor the device's training comparison (the
# CPU's side of it is the same bits in both builds: cross-build-check).
# Nor (2026-11-27, CI time: about 360 s of CPU on scalar kernels) the
# trainer's CLI tests, whose checkpoint, resume and output logic does not
# depend on the kernels (make test and the sanitizers run them), and
# NnGolden's two CNN trainings against PyTorch (the op suite holds the
# scalar kernels to the vector ones bit for bit, so they give make test's
# bits; the MLP ones still run here).
# Nor (2026-11-28, session 23, CI time: 160 s of CPU on scalar kernels,
# the two longest tests there) two more trainings: the LibTorch example
# programs (without libtorch-dev they check that fashion_cnn prints the same
# with 1 and 2 threads; the op suite holds the scalar kernels to the same
# bits at 1, 2, 3 and 8 threads) and train_golden (60 steps of the CLI's
# CNN, 89 s here: the fingerprint sweep's conv-net training steps, which
# cross-build-check compares with the full build's, and the op suite's
# every-capability equality hold the scalar kernels to the bits that make
# test's train_golden checks; the loader and the CLI do not depend on
# the kernels).
# Nor (2026-12-05, CI time: about 70 s of CPU) what does not depend on the
# CPU kernels: the install test (packaging; make test runs it), the GPT
# example program (a training; the fingerprint sweep's GPT training and
# generation fingerprints, gpt_train_params and gpt_greedy_*, hold
# the scalar kernels to make test's bits) and the device's two CPU
# comparisons (the device's bits are its shaders'; cross-build-check holds
# the CPU side equal in both builds).
# Nor (2026-12-05, CI time: 20 s of CPU) fingerprint_golden: the scalar
# build's sweep against the committed file, which cross-build-check's
# comparison of the same sweep with the full build's (itself compared with
# the committed file by make test's fingerprint_golden) already holds.
SCALAR_SKIP = ^fingerprint_golden$$|^install_find_package$$|^gpt_example$$|^Vulkan\.EveryLibraryModelTrainsToTheCpuFingerprint$$|^Vulkan\.OpRecordsSamplesGiveTheCpuBits$$|^TrainCli\.|^Verify\.TrainThreadsWorkersAndResume|^Vulkan\.TrainingOnTheDeviceGivesTheCpuFingerprint|^NnGolden\.Cnn|^libtorch_examples$$|^train_golden$$

# The scalar-only build also compiles the benchmark programs (DITTO_BUILD_BENCH:
# about 25 s here), so that an API change that breaks them fails CI instead
# of the next `make bench` (the training and RNN benchmarks went two
# sessions unbuilt after Sequential and the RNNs became LibTorch-style
# holders, 2026-11-28). It does not run them: benchmarks are programs, not
# tests (docs/design.md §8).
scalar-test: setup
	cmake -S . -B build-scalar -DCMAKE_BUILD_TYPE=Release -DDITTO_SIMD=scalar -DDITTO_BUILD_PYTHON=OFF -DDITTO_BUILD_DISTRIBUTED=OFF -DDITTO_BUILD_BENCH=ON $(CMAKE_FLAGS)
	cmake --build build-scalar -j $(JOBS)
	cd build-scalar && ctest --output-on-failure -j $(JOBS) -E '$(SCALAR_SKIP)'

# The same fingerprints from the DITTO_SIMD=all and DITTO_SIMD=scalar builds
# (R5 across builds, not only across capabilities within one).
cross-build-check:
	./$(BUILD)/tests/ditto_fingerprints > $(BUILD)/fp-all.txt
	./build-scalar/tests/ditto_fingerprints > build-scalar/fp-scalar.txt
	scripts/fingerprint_compare cross-build-check $(BUILD)/fp-all.txt build-scalar/fp-scalar.txt
	@echo "cross-build-check: the all and scalar-only builds give the same bits"

# The demo, the fingerprint sweep and the bit-equality tests under emulated
# CPUs this machine may lack (qemu-x86_64 -cpu Nehalem and Haswell-v4): the
# same bits as the native run (scripts/cpu_check).
cpu-check: build
	@scripts/setup --emulation
	scripts/cpu_check $(BUILD)

# The same bits on aarch64: a cross build (Debian's g++-aarch64-linux-gnu)
# run under qemu-aarch64, compared with this build (scripts/cross_arch_check).
cross-arch-check: build
	@scripts/setup --cross
	scripts/cross_arch_check $(BUILD) build-aarch64

bench:
	@scripts/setup --bench
	cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DDITTO_BUILD_BENCH=ON \
	  -DDITTO_BUILD_TESTS=OFF $(CMAKE_FLAGS)
	cmake --build build-bench -j $(JOBS) --target ditto_bench ditto_bench_rnn libtorch_bench ditto_train_rss \
	  ditto_libtorch_fashion_cnn libtorch_fashion_cnn ditto_libtorch_alexnet libtorch_alexnet
	/usr/bin/python3 bench/compare.py --ditto-bench build-bench/bench/ditto_bench
	/usr/bin/python3 bench/compare_autograd.py --ditto-bench build-bench/bench/ditto_bench \
	  --libtorch-bench build-bench/bench/libtorch_bench
	/usr/bin/python3 bench/compare_nn_backward.py --ditto-bench build-bench/bench/ditto_bench
	/usr/bin/python3 bench/compare_rnn.py --ditto-bench build-bench/bench/ditto_bench_rnn
	/usr/bin/python3 bench/compare_train.py --ditto-bench build-bench/bench/ditto_bench \
	  --ditto-rss build-bench/bench/ditto_train_rss \
	  --libtorch-bench build-bench/bench/libtorch_bench
	/usr/bin/python3 bench/compare_libtorch_examples.py \
	  --ditto build-bench/ditto_libtorch_fashion_cnn --libtorch build-bench/libtorch_fashion_cnn \
	  --ditto-alexnet build-bench/bench/ditto_libtorch_alexnet \
	  --libtorch-alexnet build-bench/bench/libtorch_alexnet

# The device suite, `ditto env` and the benchmark on a Vulkan device
# (docs/device.md): vulkan:0 unless GPU_DEVICE names another. Needs only the
# Vulkan loader and the vendor's driver besides the build.
GPU_DEVICE ?= 0
gpu-check: build
	$(BUILD)/ditto env | sed -n '/vulkan/,+1p'
	DITTO_TEST_VULKAN_DEVICE=$(GPU_DEVICE) $(BUILD)/tests/test_device
	$(BUILD)/ditto_vulkan_bench $(GPU_DEVICE)

# The same programs in gpu-bundle/, with the loader, for a GPU machine with
# no toolchain: run gpu-bundle/run there.
gpu-bundle: build
	scripts/gpu_bundle $(BUILD) gpu-bundle

# The Python bindings' cost per call next to PyTorch 1.13's, then with the
# CPython fast paths off, and cumsum against PyTorch's (docs/benchmarks.md).
bench-python: configure
	@scripts/setup --bench
	cmake --build $(BUILD) -j $(JOBS) --target ditto_python
	PYTHONPATH=$(BUILD)/python /usr/bin/python3 bench/python/bench_overhead.py
	DITTO_PYTHON_FAST_PATHS=0 PYTHONPATH=$(BUILD)/python \
	  /usr/bin/python3 bench/python/bench_overhead.py
	PYTHONPATH=$(BUILD)/python /usr/bin/python3 bench/python/bench_scan.py
	PYTHONPATH=$(BUILD)/python /usr/bin/python3 bench/python/bench_nanogpt.py
	PYTHONPATH=$(BUILD)/python /usr/bin/python3 bench/python/bench_attention.py

# Regenerates the registry table in docs/determinism.md.
docs: build
	cmake -DGENERATOR=./$(BUILD)/ditto -DDOC=docs/determinism.md \
	  -DMODE=update -P tools/check_doc_table.cmake

format:
	clang-format -i $(FORMAT_FILES)

format-check:
	@scripts/setup
	clang-format --dry-run --Werror $(FORMAT_FILES)

clean:
	rm -rf build build-sanitize build-tsan build-scalar build-bench build-aarch64
