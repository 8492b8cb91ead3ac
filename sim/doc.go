// Package sim is everything between the data and the models: corruptions,
// the settings and their ranges, the catalogue of models behind one
// interface, the engine goroutine that records trajectories for the window,
// the metrics, and the batch experiments behind `reproduce`. Data lives in
// sim/mnist and plots in sim/figures. It never imports a GUI package.
package sim
