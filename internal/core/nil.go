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
