package ui

import "image"

// grayImage renders 784 pixels in [0,1] as a 28×28 image (white ink on
// black, as MNIST); values outside [0,1] are clamped.
func grayImage(px []float32) *image.Gray {
	img := image.NewGray(image.Rect(0, 0, 28, 28))
	for k, v := range px {
		img.Pix[k] = uint8(min(max(v, 0), 1)*255 + 0.5)
	}
	return img
}
