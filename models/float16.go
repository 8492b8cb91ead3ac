package models

import (
	"math"
	"sync"
)

// MaxFloat16 is the largest finite IEEE half-precision value.
const MaxFloat16 = 65504

// Float16To32 widens an IEEE 754 half-precision value (binary16) to
// float32; every half value, subnormals, infinities and NaN included, is
// exactly representable.
func Float16To32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	man := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // Inf or NaN
		return math.Float32frombits(sign | 0xff<<23 | man<<13)
	case exp == 0 && man == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: man·2⁻²⁴
		v := float32(man) * (1.0 / (1 << 24))
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | man<<13)
}

// float16Table holds Float16To32 of every half-precision value, as bits
// (a NaN's payload kept whatever the platform does with float moves).
// Reading a half-precision file through it cost the page (WebAssembly, in
// code the browser has not optimised yet) a fraction of the conversion's
// time.
var float16Table = sync.OnceValue(func() *[1 << 16]uint32 {
	var t [1 << 16]uint32
	for h := range t {
		t[h] = math.Float32bits(Float16To32(uint16(h)))
	}
	return &t
})

// Float32To16 rounds f to the nearest half-precision value (ties to even),
// as PyTorch's tensor.half() does: beyond ±65504 it gives ±Inf, below the
// smallest subnormal ±0; NaN stays NaN.
func Float32To16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	man := b & 0x7fffff
	if exp == 0xff {
		if man != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		if e < -10 {
			return sign
		}
		// subnormal half: shift the full mantissa (with its hidden bit)
		m := man | 0x800000
		shift := uint32(14 - e)
		h := m >> shift
		rem := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(e)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // may carry into the exponent, up to Inf: still correct
	}
	return sign | uint16(h)
}
