package ui

import (
	"image"
	"image/color"
)

// grayImage renders 784 pixels in [0,1] as a 28×28 image (white ink on
// black, as MNIST); values outside [0,1] are clamped.
func grayImage(px []float32) *image.Gray {
	img := image.NewGray(image.Rect(0, 0, 28, 28))
	for k, v := range px {
		img.Pix[k] = uint8(min(max(v, 0), 1)*255 + 0.5)
	}
	return img
}

// maskedOverlay tints masked pixels so the user sees which patches were
// removed.
func maskedOverlay(px []float32, pixelMask []bool) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, 28, 28))
	for k, v := range px {
		g := uint8(min(max(v, 0), 1)*255 + 0.5)
		c := color.RGBA{g, g, g, 255}
		if pixelMask != nil && pixelMask[k] {
			c = color.RGBA{90, 40, 120, 255}
		}
		img.SetRGBA(k%28, k/28, c)
	}
	return img
}
