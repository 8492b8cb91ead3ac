// Package figures draws the app's plots with gonum/plot, headless: MSE and
// energy curves, the paper's Fig. 1 and Fig. 2, rendered to images or PNG
// files. It never imports Fyne; the window shows what it renders.
package figures
