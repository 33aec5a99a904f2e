package core

import "reflect"

// IsNil reports whether v is nil or an interface holding a nil pointer
// (a typed nil, such as a (*redis.Client)(nil) passed as a
// redis.UniversalClient), which a plain v == nil does not catch and whose
// methods would dereference nil.
func IsNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan:
		return rv.IsNil()
	}
	return false
}

// NilReceiver returns the error of every method of a nil *typ, typ a
// type of package pkg: "<pkg>: nil *<typ>", matching ErrUnmade and so
// ErrInvalidArgument. A type keeps it in a variable, made once.
func NilReceiver(pkg, typ string) error {
	return &narrower{pkg + ": nil *" + typ, ErrUnmade}
}
