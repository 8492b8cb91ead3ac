//go:build js && webweights

package assets

import "embed"

// FashionSample is empty in the page: its 4.8 MB would be in every
// visitor's download (the page offers MNIST only for now).
var FashionSample embed.FS
