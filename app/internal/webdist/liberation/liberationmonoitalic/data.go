// Package liberationmonoitalic stands in for the Liberation font of that name in the web
// build: it hands out the Go font of the same style (see ../README.md).
package liberationmonoitalic // import "codeberg.org/go-fonts/liberation/liberationmonoitalic"

import "golang.org/x/image/font/gofont/goitalic"

// TTF is the Go font goitalic's TrueType data.
var TTF = goitalic.TTF
