//go:build !js

package models

// compactRowsHere: the desktop keeps a memory's rows standardised, the
// faster search (Memory).
const compactRowsHere = false
