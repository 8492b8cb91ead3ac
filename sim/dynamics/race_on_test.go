//go:build race

package dynamics

// raceOn: the race detector is on (make test-race). Long single-goroutine
// numerics skip there: the portable and SIMD passes check their numbers,
// and the race pass keeps its time for the code that shares memory.
const raceOn = true
