package models

import (
	"fmt"
	"math"
)

// BSAPatchSides are the patch sides P a bare self-attention network may
// have: divisors of 28 that leave at least two tokens (with one token there
// is nothing to attend to).
var BSAPatchSides = []int{1, 2, 4, 7, 14}

// MinBSADim is the smallest embedding dimension for patch side p: the spin
// dimension 2P².
func MinBSADim(p int) int { return 2 * p * p }

// MaxBSADim is the largest embedding dimension d for patch side p (0 for a
// P not in BSAPatchSides): the largest d for which both
//
//   - the file, J [N,N,d,d] and F [d,2P²] as float32, 4·(N²d² + 2P²d)
//     bytes, is at most MaxDataBytes (1 GiB), so every network NewBSA makes
//     can be saved and loaded again, and
//   - J in memory, padded to N·NP·d² floats (NP = N rounded up to 16),
//     is at most MaxDataBytes, so loading a file never allocates more.
//
// The bytes of J at the maximum (file: 4·N²d²; memory: 4·N·NP·d²):
//
//	P=1:  d ≤ 20    file 983,449,600    memory 983,449,600
//	P=2:  d ≤ 81    file 1,008,189,504  memory 1,069,915,392
//	P=4:  d ≤ 292   file 818,875,456    memory 1,069,551,616
//	P=7:  d ≤ 1023  file 1,071,645,696  memory 1,071,645,696 (+ F: 1,072,046,712)
//	P=14: d ≤ 2048  file 268,435,456    memory 1,073,741,824
//
// MaxDataBytes is 1,073,741,824. Training needs about four times the
// memory of J (J, its gradient and the two AdamW moments).
func MaxBSADim(p int) int { return largestBSADim(p, bsaFits) }

// largestBSADim is the largest embedding dimension d for patch side p
// whose network fits (n tokens, np padded, spin dimension a2; fits holds
// up to some d and not beyond), 0 for a P not in BSAPatchSides.
func largestBSADim(p int, fits func(n, np, a2, d int64) bool) int {
	pt, err := bsaPatches(p)
	if err != nil {
		return 0
	}
	n, np, a2 := int64(pt.N), int64(roundUp16(pt.N)), int64(2*pt.A)
	d := int64(math.Sqrt(float64(MaxDataBytes / 4 / (n * np))))
	for d > 0 && !fits(n, np, a2, d) {
		d--
	}
	for fits(n, np, a2, d+1) {
		d++
	}
	return int(d)
}

// MaxTrainBytes bounds what training a bare self-attention holds of its
// couplings: J, its gradient and the two AdamW moments, each N·NP·d²
// float32 (the batches' buffers come on top, a few hundred MB at most).
const MaxTrainBytes = 2 << 30

// MaxTrainBSADim is the largest d that training can take for patch side
// p: four padded copies of J within MaxTrainBytes (P=2: 57, P=4: 206; a
// file up to MaxBSADim, d = 81 at P=2, still loads and runs, but training
// it held 8.3 GB). 0 for a P not in BSAPatchSides.
func MaxTrainBSADim(p int) int {
	return largestBSADim(p, func(n, np, a2, d int64) bool {
		return bsaFits(n, np, a2, d) && 16*n*np*d*d <= MaxTrainBytes
	})
}

// CheckTrainBSADim refuses an embedding dimension training cannot take
// for patch side p (outside MinBSADim … MaxTrainBSADim), naming the range.
func CheckTrainBSADim(p, d int) error {
	if _, err := bsaPatches(p); err != nil {
		return err
	}
	if lo, hi := MinBSADim(p), MaxTrainBSADim(p); d < lo || d > hi {
		return fmt.Errorf("d = %d is out of range for training at P=%d (allowed %d … %d: training holds the couplings four times over, within %d GiB)", d, p, lo, hi, MaxTrainBytes>>30)
	}
	return nil
}

// bsaFits reports whether a network of n tokens (np padded), spin
// dimension a2 and embedding dimension d stays within MaxDataBytes both as
// a file and as the padded J in memory.
func bsaFits(n, np, a2, d int64) bool {
	return bsaFileBytes(n, a2, d) <= MaxDataBytes && 4*n*np*d*d <= MaxDataBytes
}

// bsaFileBytes is the data section of a BSA file: J [n,n,d,d] and F [d,a2].
func bsaFileBytes(n, a2, d int64) int64 { return 4 * (n*n*d*d + d*a2) }

// bsaPatches returns the tokenisation for a BSA patch side.
func bsaPatches(p int) (*Patches, error) {
	for _, q := range BSAPatchSides {
		if p == q {
			return NewPatches(p)
		}
	}
	var list string
	for k, q := range BSAPatchSides {
		switch {
		case k == 0:
		case k == len(BSAPatchSides)-1:
			list += " or "
		default:
			list += ", "
		}
		list += fmt.Sprint(q)
	}
	return nil, fmt.Errorf("patch = %d is out of range (allowed %s)", p, list)
}

// checkBSADim refuses a patch side outside BSAPatchSides or an embedding
// dimension outside [MinBSADim(p), MaxBSADim(p)].
func checkBSADim(p, d int) error {
	if _, err := bsaPatches(p); err != nil {
		return err
	}
	if lo, hi := MinBSADim(p), MaxBSADim(p); d < lo || d > hi {
		return fmt.Errorf("d = %d is out of range for P=%d (allowed %d … %d)", d, p, lo, hi)
	}
	return nil
}
