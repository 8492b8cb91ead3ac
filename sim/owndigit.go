package sim

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	_ "image/jpeg" // PNG and JPEG files can be a digit
	_ "image/png"
	"io"
	"math"
	"slices"
	"strings"

	"attractorlab/models"
	"attractorlab/models/infile"
)

// A person's own digit — drawn in the window or read from a picture — is
// made to look like the MNIST data (docs/maths.md §1, "Your own digit"):
// the ink's bounding box is scaled to fit 20×20 keeping its aspect ratio
// (each new pixel the mean of the area it covers: anti-aliased), placed in
// 28×28 and moved by whole pixels so its centre of mass lies at the
// image's centre, and kept as bytes as MNIST is.

// MaxPictureSide is the largest width or height of a picture read as a
// digit, MaxPicturePixels the most pixels (decoding one costs up to 16
// bytes a pixel: a 16-bit picture and its lightness; 4096×4096 stays near
// 300 MB, where an 8192×8192 16-bit PNG took the window to 2.5 GB), and
// MaxPictureFile the largest file.
const (
	MaxPictureSide   = 8192
	MaxPicturePixels = 4096 * 4096
	MaxPictureFile   = 64 << 20
)

// ReadDigitPictureFile reads the picture file at path (a regular file of
// at most MaxPictureFile bytes, refused by name otherwise) as
// ReadDigitPicture does.
func ReadDigitPictureFile(path string) ([]uint8, error) {
	f, err := infile.Open(path, "picture", MaxPictureFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadDigitPicture(f, path)
}

// PrepareDigit turns a w×h picture of ink (row-major, values in [0,1],
// ink bright) into a 28×28 MNIST-like digit, as bytes (0 … 255). A
// picture without ink gives a black digit.
func PrepareDigit(ink []float64, w, h int) []uint8 {
	out := make([]uint8, models.Pixels)
	hi := 0.0
	for _, v := range ink {
		hi = max(hi, v)
	}
	if !(hi > 0) {
		return out
	}
	// The ink's bounding box: pixels above a twentieth of the brightest.
	x0, y0, x1, y1 := w, h, -1, -1
	for y := range h {
		for x := range w {
			if ink[y*w+x] > hi/20 {
				x0, y0, x1, y1 = min(x0, x), min(y0, y), max(x1, x), max(y1, y)
			}
		}
	}
	bw, bh := x1-x0+1, y1-y0+1
	scale := 20 / float64(max(bw, bh))
	tw, th := max(1, int(math.Round(float64(bw)*scale))), max(1, int(math.Round(float64(bh)*scale)))
	small := resampleArea(ink, w, x0, y0, bw, bh, tw, th)
	// In a 28×28 field, then moved so the centre of mass is at (13.5, 13.5).
	var sum, sx, sy float64
	ox, oy := (models.Side-tw)/2, (models.Side-th)/2
	for y := range th {
		for x := range tw {
			v := small[y*tw+x]
			sum += v
			sx += v * float64(ox+x)
			sy += v * float64(oy+y)
		}
	}
	if sum > 0 {
		mid := float64(models.Side-1) / 2
		ox += int(math.Round(mid - sx/sum))
		oy += int(math.Round(mid - sy/sum))
		ox = min(max(ox, 0), models.Side-tw) // the digit stays whole
		oy = min(max(oy, 0), models.Side-th)
	}
	for y := range th {
		for x := range tw {
			v := small[y*tw+x] / hi
			out[(oy+y)*models.Side+ox+x] = uint8(math.Round(255 * min(max(v, 0), 1)))
		}
	}
	return out
}

// resampleArea scales the bw×bh box at (x0, y0) of a picture w wide to
// tw×th: each new pixel is the mean of the source area it covers, partial
// source pixels weighted by the part covered.
func resampleArea(src []float64, w, x0, y0, bw, bh, tw, th int) []float64 {
	out := make([]float64, tw*th)
	fx, fy := float64(bw)/float64(tw), float64(bh)/float64(th)
	for ty := range th {
		sy0, sy1 := float64(ty)*fy, float64(ty+1)*fy
		for tx := range tw {
			sx0, sx1 := float64(tx)*fx, float64(tx+1)*fx
			var acc float64
			for y := int(sy0); y < bh && float64(y) < sy1; y++ {
				cy := math.Min(sy1, float64(y+1)) - math.Max(sy0, float64(y))
				for x := int(sx0); x < bw && float64(x) < sx1; x++ {
					cx := math.Min(sx1, float64(x+1)) - math.Max(sx0, float64(x))
					acc += cx * cy * src[(y0+y)*w+x0+x]
				}
			}
			out[ty*tw+tx] = acc / (fx * fy)
		}
	}
	return out
}

// ReadDigitPicture reads a PNG or JPEG file (any size up to
// MaxPictureSide) as a digit: its lightness, over white where it is
// transparent, with the ink taken as the colour that differs from the
// picture's border (dark ink on light paper is turned round), then
// PrepareDigit. name is the file's name for errors.
func ReadDigitPicture(r io.Reader, name string) ([]uint8, error) {
	head := make([]byte, 0, 64<<10)
	buf := &readRecorder{r: r, buf: head}
	cfg, format, err := image.DecodeConfig(buf)
	if err != nil {
		return nil, fmt.Errorf("%s: not a PNG or JPEG picture: %v", name, err)
	}
	if format != "png" && format != "jpeg" {
		// Other decoders linked into the binary (GIF, for the exports)
		// are not what a digit is read from.
		return nil, fmt.Errorf("%s: a %s picture: a digit is read from a PNG or JPEG file", name, strings.ToUpper(format))
	}
	if cfg.Width < 1 || cfg.Height < 1 || cfg.Width > MaxPictureSide || cfg.Height > MaxPictureSide {
		return nil, fmt.Errorf("%s: a %d×%d picture (allowed 1×1 … %d×%d)", name, cfg.Width, cfg.Height, MaxPictureSide, MaxPictureSide)
	}
	if px := cfg.Width * cfg.Height; px > MaxPicturePixels {
		return nil, fmt.Errorf("%s: a %d×%d picture has %.1f million pixels (allowed up to %.1f million, e.g. %d×%d): scale it down first", name, cfg.Width, cfg.Height,
			float64(px)/1e6, float64(MaxPicturePixels)/1e6, 4096, 4096)
	}
	img, _, err := image.Decode(io.MultiReader(bytes.NewReader(buf.buf), r))
	if err != nil {
		return nil, fmt.Errorf("%s: a %s picture that cannot be read: %v", name, format, err)
	}
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	light := make([]float64, w*h)
	var border []float64
	for y := range h {
		for x := range w {
			c := color.NRGBAModel.Convert(img.At(b.Min.X+x, b.Min.Y+y)).(color.NRGBA)
			a := float64(c.A) / 255
			l := (0.299*float64(c.R) + 0.587*float64(c.G) + 0.114*float64(c.B)) / 255
			l = a*l + (1 - a) // over white
			light[y*w+x] = l
			if x == 0 || y == 0 || x == w-1 || y == h-1 {
				border = append(border, l)
			}
		}
	}
	slices.Sort(border)
	paper := border[len(border)/2] // the median of the border: the paper
	if paper > 0.5 {
		for k, l := range light {
			light[k] = 1 - l
		}
		paper = 1 - paper
	}
	// Ink is what stands above the paper: grey paper (a photo of a
	// sketch) is not ink.
	if paper < 1 {
		for k, v := range light {
			light[k] = max(0, (v-paper)/(1-paper))
		}
	}
	d := PrepareDigit(light, w, h)
	if !slices.ContainsFunc(d, func(b uint8) bool { return b != 0 }) {
		return nil, fmt.Errorf("%s: no ink: the %d×%d picture is one shade (a digit is dark strokes on light paper, or light on dark)", name, w, h)
	}
	return d, nil
}

// readRecorder keeps what DecodeConfig read, so the decoder can start
// again from the beginning of a stream that cannot seek.
type readRecorder struct {
	r   io.Reader
	buf []byte
}

func (rr *readRecorder) Read(p []byte) (int, error) {
	n, err := rr.r.Read(p)
	rr.buf = append(rr.buf, p[:n]...)
	return n, err
}
