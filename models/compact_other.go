//go:build !js

package models

// compactRowsHere: the desktop keeps a memory's rows standardised
// (Memory): its memory is not short.
const compactRowsHere = false
