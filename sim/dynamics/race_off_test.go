//go:build !race

package dynamics

const raceOn = false
