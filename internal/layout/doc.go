// Package layout holds no code: its tests keep the module's structure, so
// that no import runs from a lower package to a higher one and no source
// file grows past the size a reader can hold.
package layout
