package fakeprovider

import (
	"fmt"
	"slices"
	"strings"
)

// presets maps a name to a function building its profile. Each preset's
// source is in the comment of its function.
var presets = map[string]func() Profile{}

// Presets returns the preset names, sorted.
func Presets() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Preset returns the named preset's profile; the error lists the names.
func Preset(name string) (Profile, error) {
	mk, ok := presets[name]
	if !ok {
		return Profile{}, fmt.Errorf("fakeprovider: unknown preset %q (have %s)", name, strings.Join(Presets(), ", "))
	}
	return mk(), nil
}
