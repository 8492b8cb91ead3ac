//go:build !unix

package main

// lockDirs has no lock where flock(2) is missing (the browser has one
// writer).
func lockDirs([]string) (func(), error) { return func() {}, nil }
