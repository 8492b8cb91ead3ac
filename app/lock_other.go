//go:build !unix

package main

import "os"

// lockDirs has no lock where flock(2) is missing (the browser has one
// writer).
func lockDirs([]string) (func(), error) { return func() {}, nil }

// holdFile takes no lock where flock(2) is missing.
func holdFile(*os.File) error { return nil }

// unheld cannot tell a live writer's temporary file from a stale one
// without flock(2): none is stale.
func unheld(string) bool { return false }
