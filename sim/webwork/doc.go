// Package webwork runs the web build's population jobs (the Ensemble and
// the Basin map) in Web Workers, so that the page's one thread only draws.
//
// The page (assets/web/index.html) keeps a pool of workers, each its own
// instance of the app's WebAssembly started as `attractorlab worker`
// (assets/web/worker.js). A job is a sweep.Part in its wire form; its
// worker answers with the part's errors (sweep.PartErrors), telling the
// image-steps done as it goes. Pool is the page's side (a sweep.Remote),
// Serve the worker's. Outside the browser the package holds only this
// comment: the desktop runs parts on its own cores.
package webwork
