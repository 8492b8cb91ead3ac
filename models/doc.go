// Package models holds the numerics of Attractor Lab and their weight
// files; it never imports a GUI package, nor anything of the project but
// its own infile (bounded file reading).
//
//   - The bare self-attention (bsa.go): the spin embedding, the step and
//     its energy, per image and 16 images at a time (bsachunk.go), and its
//     pseudo-likelihood training (train.go); its weights file (bsafile.go).
//   - The transformer layers as forward/backward pairs (nn.go), the
//     recycled block and the ViT (transformer.go), their batched fast path
//     (tbatch.go) and backprop training (ttrain.go).
//   - The modern and classical Hopfield networks (hopfield.go).
//   - The nearest-memory search, exact but pruned (memory.go, quant.go).
//   - The kernels (kernels.go, gemm.go, and the AVX-512 versions in the
//     *_simd.go and *_amd64.s files), each with a naive twin the tests
//     compare it with; one init per build chooses them (kernel_simd.go
//     with GOEXPERIMENT=simd, kernel_asm.go the assembly alone in a plain
//     amd64 build, asm_amd64.go asks the CPU); Kernels says which run.
//   - Safetensors reading and writing (safetensors.go), half precision for
//     the web build (float16.go, webweights.go).
//   - The one parallel-for and the crew whose idle workers share the busy
//     ones' work (parallel.go, crew.go).
//
// The maths is written out in docs/maths.md; section numbers in comments
// (§n) refer to it.
package models
