//go:build !race

package models

// raceOn: see race_on_test.go.
const raceOn = false
