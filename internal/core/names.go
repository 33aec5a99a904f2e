package core

import (
	"fmt"
	"strings"
)

// ValidateName reports whether name can be a lock name. It must be
// non-empty; when it contains a '{' its first '{' must be followed by a
// non-empty hash tag closed by '}'; and without a '{' it must not contain
// a '}', which would end the tag that Prefix and Suffix wrap around it.
// Only then do the lock key and every name derived from it hash to the
// same cluster slot.
func ValidateName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty", ErrInvalidName)
	}
	open := strings.IndexByte(name, '{')
	if open < 0 {
		if strings.IndexByte(name, '}') >= 0 {
			return fmt.Errorf("%w: %q has a '}' but no hash tag", ErrInvalidName, name)
		}
		return nil
	}
	end := strings.IndexByte(name[open+1:], '}')
	if end <= 0 {
		return fmt.Errorf("%w: %q has a '{' without a non-empty hash tag after it", ErrInvalidName, name)
	}
	return nil
}

// Prefix derives a key or channel name that hashes to name's slot, as
// Redisson does: "p:{name}", or "p:name" when name carries its own tag.
func Prefix(p, name string) string {
	if strings.Contains(name, "{") {
		return p + ":" + name
	}
	return p + ":{" + name + "}"
}

// Suffix is Prefix's counterpart for suffixes: "{name}:s", or "name:s" when
// name carries its own tag.
func Suffix(name, s string) string {
	if strings.Contains(name, "{") {
		return name + ":" + s
	}
	return "{" + name + "}:" + s
}
