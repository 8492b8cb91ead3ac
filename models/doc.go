// Package models holds the numerics of Attractor Lab: the spin embedding,
// the bare self-attention (BSA) dynamics and its pseudo-likelihood training,
// and weight I/O in safetensors. It never imports a GUI package.
//
// The maths is written out in docs/maths.md; section numbers in comments
// (§n) refer to it.
package models
