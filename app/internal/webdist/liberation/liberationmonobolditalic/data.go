// Package liberationmonobolditalic stands in for the Liberation font of that name in the web
// build: it hands out the Go font of the same style (see ../README.md).
package liberationmonobolditalic // import "codeberg.org/go-fonts/liberation/liberationmonobolditalic"

import "golang.org/x/image/font/gofont/gobolditalic"

// TTF is the Go font gobolditalic's TrueType data.
var TTF = gobolditalic.TTF
