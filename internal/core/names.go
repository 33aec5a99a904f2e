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

// partSep separates a lock's name from the part an owner holds
// (PartName).
const partSep = "\x00"

// PartName is the name of the holds on part of the lock name, for a lock
// type whose owner may hold several parts of one lock at once, each
// renewed and released on its own (grouplock's sets of values of one
// group): the client keeps such holds apart under this name, and
// force-unlock notices carry it. Users see name alone: the Observer and
// the client's log are given LockName of it.
func PartName(name, part string) string { return name + partSep + part }

// LockName is the lock's name in a hold's name made by PartName, or the
// hold's name as it is.
func LockName(hold string) string {
	if i := strings.LastIndex(hold, partSep); i >= 0 {
		return hold[:i]
	}
	return hold
}
