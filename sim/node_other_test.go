//go:build !js

package sim

// underNode: see node_js_test.go.
const underNode = false
