// Package liberationmonobold stands in for the Liberation font of that name in the web
// build: it hands out the Go font of the same style (see ../README.md).
package liberationmonobold // import "codeberg.org/go-fonts/liberation/liberationmonobold"

import "golang.org/x/image/font/gofont/gobold"

// TTF is the Go font gobold's TrueType data.
var TTF = gobold.TTF
