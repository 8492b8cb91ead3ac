package models

import (
	"math"
	"sync"
)

// zPool recycles the standardised copies of predictions.
var zPool sync.Pool

// Memory finds, for predictions, the stored image with the highest Pearson
// correlation (§8 "nearest memory"). Stored rows are centred and scaled to
// unit norm and kept in column blocks [q][memBlock] so the kernel streams
// one block from cache for many predictions.
type Memory struct {
	M, Q   int
	blocks [][]float32 // per block of memBlock memories: [Q][memBlock]
}

const memBlock = 128 // memories per block (4 kernel tiles of 32)

// NewMemory stores rows (each of length q).
func NewMemory(rows [][]float32) *Memory {
	mem := &Memory{M: len(rows)}
	if len(rows) > 0 {
		mem.Q = len(rows[0])
	}
	nb := (mem.M + memBlock - 1) / memBlock
	for b := 0; b < nb; b++ {
		blk := make([]float32, mem.Q*memBlock)
		for c := 0; c < memBlock; c++ {
			k := b*memBlock + c
			if k >= mem.M {
				break
			}
			z := standardize(rows[k])
			for q, v := range z {
				blk[q*memBlock+c] = v
			}
		}
		mem.blocks = append(mem.blocks, blk)
	}
	return mem
}

// standardize returns (x − mean)/‖x − mean‖, or zeros for a constant x.
func standardize(x []float32) []float32 {
	return standardizeTo(make([]float32, len(x)), x)
}

// standardizeTo writes standardize(x) into out and returns it.
func standardizeTo(out, x []float32) []float32 {
	var m float64
	for _, v := range x {
		m += float64(v)
	}
	m /= float64(len(x))
	var ss float64
	for _, v := range x {
		ss += (float64(v) - m) * (float64(v) - m)
	}
	if ss == 0 {
		clear(out)
		return out
	}
	inv := 1 / math.Sqrt(ss)
	for k, v := range x {
		out[k] = float32((float64(v) - m) * inv)
	}
	return out
}

// Nearest writes, for every prediction, the index of the most correlated
// stored row and that correlation. A constant prediction correlates 0 with
// everything and gets index 0.
func (mem *Memory) Nearest(preds [][]float32, idx []int, corr []float32) {
	buf, _ := zPool.Get().(*[]float32)
	if buf == nil || len(*buf) < len(preds)*mem.Q {
		b := make([]float32, len(preds)*mem.Q)
		buf = &b
	}
	defer zPool.Put(buf)
	z := make([][]float32, len(preds))
	for p := range preds {
		z[p] = standardizeTo((*buf)[p*mem.Q:(p+1)*mem.Q], preds[p])
		idx[p], corr[p] = 0, float32(math.Inf(-1))
	}
	zero := make([]float32, mem.Q)
	var out [4 * 32]float32
	for b, blk := range mem.blocks {
		for p0 := 0; p0 < len(z); p0 += 4 {
			var ys [4][]float32
			for r := range ys {
				ys[r] = zero
				if p0+r < len(z) {
					ys[r] = z[p0+r]
				}
			}
			for c0 := 0; c0 < memBlock; c0 += 32 {
				dots4x32(&ys, blk[c0:], memBlock, mem.Q, &out)
				for r := 0; r < 4 && p0+r < len(z); r++ {
					for c := 0; c < 32; c++ {
						k := b*memBlock + c0 + c
						if k < mem.M && out[r*32+c] > corr[p0+r] {
							corr[p0+r], idx[p0+r] = out[r*32+c], k
						}
					}
				}
			}
		}
	}
	for p := range corr {
		if math.IsInf(float64(corr[p]), -1) {
			corr[p] = 0
		}
	}
}

// dots4x32 sets out[r*32+c] = Σ_q y[r][q]·tb[q*stride+c] for 4 rows and 32
// columns.
var dots4x32 = dots4x32Go

func dots4x32Naive(y *[4][]float32, tb []float32, stride, q int, out *[128]float32) {
	for r := 0; r < 4; r++ {
		for c := 0; c < 32; c++ {
			var s float32
			for k := 0; k < q; k++ {
				s += y[r][k] * tb[k*stride+c]
			}
			out[r*32+c] = s
		}
	}
}

func dots4x32Go(y *[4][]float32, tb []float32, stride, q int, out *[128]float32) {
	*out = [128]float32{}
	y0, y1, y2, y3 := y[0][:q], y[1][:q], y[2][:q], y[3][:q]
	for k := 0; k < q; k++ {
		row := tb[k*stride : k*stride+32]
		a0, a1, a2, a3 := y0[k], y1[k], y2[k], y3[k]
		for c, t := range row {
			out[c] += a0 * t
			out[32+c] += a1 * t
			out[64+c] += a2 * t
			out[96+c] += a3 * t
		}
	}
}
