# Entry points.  `./bootstrap.sh demo|test` installs what is missing first;
# these targets assume the Debian packages are there.
REBAR ?= rebar3
# The project's own build treats C warnings as errors (c_src/Makefile); a
# user building mcerlang as a dependency does not get -Werror.
export MCERLANG_STRICT ?= 1
ASAN_LIB := $(shell gcc -print-file-name=libasan.so 2>/dev/null)

.PHONY: all compile test test-c test-erl test-asan test-rebar3 bench bench-counts bench-workers bench-cluster bench-abstraction demo dialyzer clean

all: compile

# The library and bin/mcerlang's build (the escript runs _build/default).
compile:
	$(REBAR) compile

# The whole suite: C unit tests under ASan+UBSan, EUnit, EUnit again with
# the NIF built with ASan+UBSan loaded into the VM, then dialyzer (a cold
# PLT takes about four minutes; rebar3 caches it in ~/.cache/rebar3).
test: test-c test-erl test-asan dialyzer test-rebar3

test-c:
	$(MAKE) -C c_src test buchi-test

# The command-line tests run bin/mcerlang, which runs the default build.
test-erl: compile
	$(REBAR) eunit

# mcerlang in a fresh rebar3 project, offline: as a git dependency, as the
# `rebar3 mcerlang` plugin, with the EUnit macros, through _checkouts
# (about 45 s).
test-rebar3:
	sh .ci/rebar3_project.sh

# The BEAM itself is not instrumented, so the sanitizer runtime is preloaded
# and leak checking is off (the VM does not free everything at exit).
test-asan:
	$(MAKE) -C c_src SANITIZE=1
	$(REBAR) as test compile
	LD_PRELOAD=$(ASAN_LIB) ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:allocator_may_return_null=1 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 MCERLANG_NIF=asan \
	erl -noshell -pa _build/test/lib/mcerlang/ebin -pa _build/test/lib/mcerlang/examples \
	    -pa _build/test/lib/mcerlang/test \
	    -eval 'case eunit:test([mcerlang_tests, mce_ether_tests, mce_translate_tests, mce_nif_tests, mce_random_tests, mce_dist_tests, mce_otp_tests, mce_property_tests, mce_buchi_tests, mce_otp_diff_tests, mce_table_tests, mce_ltl_check_tests, mce_replay_tests, mce_debug_tests, mce_exitdeaths_tests, mce_translate_bind_tests, mce_ets_diff_tests, mce_procs_tests, mce_sandbox_tests, mce_inputs_tests, mce_fuzz_tests, mce_budget_tests, mce_gl_tests, mce_step_cache_tests, mce_reduction_tests, mce_symmetry_tests, mce_por_tests, mce_idle_tests, mce_faults_tests, mce_timeouts_tests, mce_netkernel_tests, mce_pg_tests, mce_stubs_tests, mce_ltl_por_tests, mce_autosym_tests, mce_cluster_tests], []) of ok -> halt(0); _ -> halt(1) end'

# +sbwt none (and the dirty schedulers' equivalents): idle schedulers sleep
# at once instead of spinning, which would count as CPU seconds of the rows.
bench:
	$(REBAR) as test compile
	erl -noshell +sbwt none +sbwtdcpu none +sbwtdio none -pa _build/test/lib/mcerlang/ebin -pa _build/test/lib/mcerlang/examples \
	    -pa _build/test/lib/mcerlang/bench -s mce_bench main -s init stop

# The parallel search's curve: 1, 2 and 4 workers (issue 20).
bench-workers:
	$(REBAR) as test compile
	erl -noshell +sbwt none +sbwtdcpu none +sbwtdio none -pa _build/test/lib/mcerlang/ebin -pa _build/test/lib/mcerlang/examples \
	    -pa _build/test/lib/mcerlang/bench -eval 'mce_bench_workers:main(), halt().'

# The abstract mode (issue 21): the seed papers' cases, concrete and abstract.
bench-abstraction:
	$(REBAR) as test compile
	erl -noshell +sbwt none +sbwtdcpu none +sbwtdio none -pa _build/test/lib/mcerlang/ebin -pa _build/test/lib/mcerlang/examples \
	    -pa _build/test/lib/mcerlang/bench -eval 'mce_bench_abstraction:main(), halt().'

# The distributed search on this machine: one node, then one and two peers
# (issue 20 item 2; docs/SCALING.md).
bench-cluster:
	$(REBAR) as test compile
	erl -noshell -sname mce_bench_cluster_$$$$ +sbwt none +sbwtdcpu none +sbwtdio none \
	    -pa _build/test/lib/mcerlang/ebin -pa _build/test/lib/mcerlang/examples \
	    -pa _build/test/lib/mcerlang/bench -eval 'mce_bench_cluster:main(), halt().'

# Verdicts and state/transition counts of the bench models but the largest:
# diff before and after a change that must leave the state space unchanged.
bench-counts:
	$(REBAR) as test compile
	erl -noshell -pa _build/test/lib/mcerlang/ebin -pa _build/test/lib/mcerlang/examples \
	    -pa _build/test/lib/mcerlang/bench -eval 'mce_bench:counts(), halt().'

demo: compile
	$(REBAR) as test compile
	erl -noshell -pa _build/test/lib/mcerlang/ebin -pa _build/test/lib/mcerlang/examples \
	    -eval 'demo:main(), halt().'
	@echo
	@echo '=== bin/mcerlang check examples/tutorial/bank.erl "bank:main()"  (the README tutorial)'
	bin/mcerlang check examples/tutorial/bank.erl 'bank:main()'; test $$? -eq 1

dialyzer:
	$(REBAR) dialyzer

clean:
	$(REBAR) clean
	$(MAKE) -C c_src clean
