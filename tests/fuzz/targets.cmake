# The libFuzzer targets: tests/fuzz/<name>_fuzz.cc, seeds in tests/fuzz/corpus/<name>.
set(QCCL_FUZZ_TARGETS codec_spec chunk_decode bootstrap ef_state)
