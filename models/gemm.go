package models

import "math"

func gemmNaive(m, n, k int, a []float32, lda int, aT bool, b []float32, ldb int, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float32
			for p := 0; p < k; p++ {
				var av float32
				if aT {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				s += av * b[p*ldb+j]
			}
			c[i*ldc+j] += s
		}
	}
}

// gemmGo works a row of C at a time: for each p, C[i,:] += A(i,p)·B[p,:].
func gemmGo(m, n, k int, a []float32, lda int, aT bool, b []float32, ldb int, c []float32, ldc int) {
	if m == 0 || n == 0 || k == 0 {
		return
	}
	sa, sk := lda, 1
	if aT {
		sa, sk = 1, lda
	}
	for i := 0; i < m; i++ {
		ci := c[i*ldc : i*ldc+n]
		for p := 0; p < k; p++ {
			av := a[i*sa+p*sk]
			if av == 0 {
				continue
			}
			bp := b[p*ldb : p*ldb+n]
			for j, bv := range bp {
				ci[j] += av * bv
			}
		}
	}
}

func geluNaive(g, dg, h []float32) {
	for k, v := range h {
		x := float64(v)
		cdf := 0.5 * (1 + math.Erf(x/math.Sqrt2))
		pdf := math.Exp(-0.5*x*x) / math.Sqrt(2*math.Pi)
		g[k] = float32(x * cdf)
		dg[k] = float32(cdf + x*pdf)
	}
}
