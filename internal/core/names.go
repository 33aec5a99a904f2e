package core

import (
	"fmt"
	"strings"
)

// ValidateName reports whether name can be a lock name. It must be
// non-empty; when it contains a '{' its first '{' must be followed by a
// non-empty hash tag closed by '}'; and without a '{' it must not contain
// a '}', which would end the tag that the names derived from it wrap
// around it (package layout). Only then do the lock key and every name
// derived from it hash to the same cluster slot.
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
