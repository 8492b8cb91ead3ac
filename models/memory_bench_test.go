package models

import (
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// BenchmarkNearest compares the nearest-memory search (101 predictions, one
// image's trajectory, against 10,000 stored images): pruned, brute force,
// and gonum's blas32 Sgemm on the same standardised data. Random images
// have no low-rank structure, so pruning gains little here; sim's
// BenchmarkNearestTrajectory measures it on digits.
func BenchmarkNearest(b *testing.B) {
	rows := randomImages(10000, 11)
	preds := randomImages(101, 12)
	mem := NewMemory(rows)
	idx := make([]int, len(preds))
	corr := make([]float32, len(preds))
	b.Run("pruned-"+kernelName, func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			mem.Nearest(preds, idx, corr)
		}
	})
	b.Run("brute-"+kernelName, func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			mem.NearestBrute(preds, idx, corr)
		}
	})
	b.Run("gonum-blas32-sgemm", func(b *testing.B) {
		T := blas32.General{Rows: len(rows), Cols: Pixels, Stride: Pixels, Data: make([]float32, len(rows)*Pixels)}
		for k, r := range rows {
			copy(T.Data[k*Pixels:], standardize(r))
		}
		Y := blas32.General{Rows: len(preds), Cols: Pixels, Stride: Pixels, Data: make([]float32, len(preds)*Pixels)}
		C := blas32.General{Rows: len(preds), Cols: len(rows), Stride: len(rows), Data: make([]float32, len(preds)*len(rows))}
		b.ReportAllocs()
		for b.Loop() {
			for p, y := range preds {
				copy(Y.Data[p*Pixels:], standardize(y))
			}
			blas32.Gemm(blas.NoTrans, blas.Trans, 1, Y, T, 0, C)
			for p := range preds {
				row := C.Data[p*len(rows) : (p+1)*len(rows)]
				best := 0
				for k, v := range row {
					if v > row[best] {
						best = k
					}
				}
				idx[p], corr[p] = best, row[best]
			}
		}
	})
}
