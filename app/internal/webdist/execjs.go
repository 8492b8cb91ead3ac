package main

import "bytes"

// Go's wasm_exec.js turns every string the app hands JavaScript into a
// JavaScript string with a TextDecoder: each WebGL call Fyne makes names
// its method ("bufferSubData", "uniform2f", …) and pays for a decode. In
// the page that was 0.6 s of 8 s of main-thread work while training
// (4× CPU throttling), more than any one call of Fyne's painter. The
// names are the same strings at the same addresses, call after call.
//
// shortStrings keeps the last string decoded at each address, up to 32
// bytes long, with its bytes: a string at that address with the same
// bytes (compared one by one, which costs less than a decode) is the same
// string; any other is decoded and kept instead. The cache holds at most
// 4,096 strings and is emptied when full.

// execLoadString is loadString as Go 1.26's wasm_exec.js has it.
const execLoadString = `			const loadString = (addr) => {
				const saddr = getInt64(addr + 0);
				const len = getInt64(addr + 8);
				return decoder.decode(new DataView(this._inst.exports.mem.buffer, saddr, len));
			}`

// shortStringsLoadString replaces it.
const shortStringsLoadString = `			// Attractor Lab (app/internal/webdist/execjs.go): a short string
			// decoded before at the same address, with the same bytes, is
			// not decoded again.
			const shortStrings = new Map();
			const loadString = (addr) => {
				const saddr = getInt64(addr + 0);
				const len = getInt64(addr + 8);
				if (len === 0 || len > 32) {
					return decoder.decode(new DataView(this._inst.exports.mem.buffer, saddr, len));
				}
				const mem = this.mem;
				const c = shortStrings.get(saddr);
				if (c !== undefined && c.bytes.length === len) {
					const b = c.bytes;
					let i = 0;
					while (i < len && mem.getUint8(saddr + i) === b[i]) {
						i++;
					}
					if (i === len) {
						return c.str;
					}
				}
				const bytes = new Uint8Array(len);
				for (let i = 0; i < len; i++) {
					bytes[i] = mem.getUint8(saddr + i);
				}
				const str = decoder.decode(bytes);
				if (shortStrings.size >= 4096) {
					shortStrings.clear();
				}
				shortStrings.set(saddr, { bytes, str });
				return str;
			}`

// withShortStrings returns Go's wasm_exec.js with loadString keeping
// short strings, and whether it found the loadString it replaces (another
// Go's wasm_exec.js may differ; then it is returned as it was).
func withShortStrings(js []byte) ([]byte, bool) {
	if bytes.Count(js, []byte(execLoadString)) != 1 {
		return js, false
	}
	return bytes.Replace(js, []byte(execLoadString), []byte(shortStringsLoadString), 1), true
}
