package hnsw

// CPUTime is cpuTime for the external benchmarks (wordvec_bench_test.go).
var CPUTime = cpuTime
