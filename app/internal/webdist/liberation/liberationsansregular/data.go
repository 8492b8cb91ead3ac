// Package liberationsansregular stands in for the Liberation font of that name in the web
// build: it hands out the Go font of the same style (see ../README.md).
package liberationsansregular // import "codeberg.org/go-fonts/liberation/liberationsansregular"

import "golang.org/x/image/font/gofont/goregular"

// TTF is the Go font goregular's TrueType data.
var TTF = goregular.TTF
