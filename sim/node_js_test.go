//go:build js

package sim

// underNode: the tests run compiled to WebAssembly under Node (make
// test-wasm), four times slower than natively. The portable kernels they
// would check again are the same Go code test-portable checks natively,
// so the longest single-goroutine numerics run smaller there or skip.
const underNode = true
