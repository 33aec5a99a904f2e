package core_test

import (
	"errors"
	"testing"

	"github.com/relock-go/relock/internal/core"
)

func TestValidateName(t *testing.T) {
	for name, valid := range map[string]bool{
		"":          false,
		"x":         true,
		"{a}":       true,
		"x{a}y{b}":  true,
		"{}":        false,
		"x{}y{a}":   false,
		"x{":        false,
		"x{a":       false,
		"}x{a}":     true,
		"}{a}":      true, // the tag starts at the first '{': "a"
		"a}b":       false,
		"orders:42": true,
	} {
		err := core.ValidateName(name)
		if (err == nil) != valid || (err != nil && !errors.Is(err, core.ErrInvalidName)) {
			t.Errorf("ValidateName(%q) = %v, want valid=%v", name, err, valid)
		}
	}
}

// The names derived from a valid name, and that they hash to its slot,
// are tested in package layout (FuzzNames).
