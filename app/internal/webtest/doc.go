// Package webtest drives the web build (make web) in the system's Chromium:
// `make test-web` builds the site and runs its test, which serves the site
// on localhost, opens it headless and checks what a visitor sees — the page
// loads and draws, the keys work, links open lessons and scenarios, a bad
// link says why — and measures the download and the speed. See web_test.go.
package webtest
