// Package layout holds no code: its tests keep the module's structure, so
// that no import runs from a lower package to a higher one, no source
// file grows past the size a reader can hold, and each type's methods
// stay in the file that declares the type.
package layout
