package models

// compactRowsHere: the web build keeps a memory's coded rows (Memory).
const compactRowsHere = true
