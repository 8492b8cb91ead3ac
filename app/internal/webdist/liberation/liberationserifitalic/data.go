// Package liberationserifitalic stands in for the Liberation font of that name in the web
// build: it hands out the Go font of the same style (see ../README.md).
package liberationserifitalic // import "codeberg.org/go-fonts/liberation/liberationserifitalic"

import "golang.org/x/image/font/gofont/goitalic"

// TTF is the Go font goitalic's TrueType data.
var TTF = goitalic.TTF
