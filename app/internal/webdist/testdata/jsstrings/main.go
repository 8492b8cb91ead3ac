// Command jsstrings hands JavaScript strings as the app does (property and
// method names) and checks that each arrives as it was sent, when the
// same address holds other bytes, another length, or characters beyond
// ASCII; execjs_test.go runs it under Node with the page's wasm_exec.js.
package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall/js"
	"unsafe"
)

func main() {
	obj := js.Global().Get("Object").New()
	var sent []string
	set := func(name string) {
		obj.Set(name, len(sent))
		sent = append(sent, strings.Clone(name))
	}
	// One buffer: every name below is at its address.
	buf := make([]byte, 40)
	at := func(s string) string {
		n := copy(buf, s)
		return unsafe.String(&buf[0], n)
	}
	for _, s := range []string{"alpha", "bravo", "alpha", "alphab", "alph", "λ‖x", "λ‖y",
		strings.Repeat("a", 32), strings.Repeat("a", 31) + "b", strings.Repeat("a", 33), strings.Repeat("a", 32) + "c"} {
		set(at(s))
	}
	// Constant names, many times, as Fyne's WebGL calls are.
	for i := 0; i < 1000; i++ {
		set("uniform2f")
		set("bufferSubData")
	}
	// Strings the collector frees, and their memory reused.
	for i := 0; i < 20000; i++ {
		set(fmt.Sprintf("k%d", i%97))
		if i%1000 == 0 {
			runtime.GC()
		}
	}
	for _, name := range sent {
		if obj.Get(name).IsUndefined() {
			fmt.Printf("%q did not arrive\n", name)
			os.Exit(1)
		}
	}
	keys := js.Global().Get("Object").Call("keys", obj)
	var got []string
	for i := 0; i < keys.Length(); i++ {
		got = append(got, keys.Index(i).String())
	}
	want := map[string]bool{}
	for _, s := range sent {
		want[s] = true
	}
	if len(got) != len(want) {
		fmt.Printf("%d names arrived, %d were sent: %q\n", len(got), len(want), got)
		os.Exit(1)
	}
	for _, g := range got {
		if !want[g] {
			fmt.Printf("%q arrived, never sent\n", g)
			os.Exit(1)
		}
	}
	fmt.Printf("ok: %d names\n", len(got))
}
