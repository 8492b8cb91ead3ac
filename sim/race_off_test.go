//go:build !race

package sim

// raceOn: see race_on_test.go.
const raceOn = false
