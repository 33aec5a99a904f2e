package transport

import (
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/redis/go-redis/v9"
)

// OptionalInt returns cmd's integer reply, with ok false when the reply
// is nil (a missing key or field).
func OptionalInt(cmd *redis.StringCmd) (n int64, ok bool, err error) {
	n, err = cmd.Int64()
	if errors.Is(err, redis.Nil) {
		return 0, false, nil
	}
	return n, err == nil, err
}

// OptionalString returns cmd's string reply, with ok false when the
// reply is nil.
func OptionalString(cmd *redis.StringCmd) (s string, ok bool, err error) {
	s, err = cmd.Result()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	return s, err == nil, err
}

// Flag is a script's yes-or-no argument, "1" or "0", boxed without
// allocating.
func Flag(b bool) any {
	if b {
		return "1"
	}
	return "0"
}

// Millis renders d for PEXPIRE-style arguments.
func Millis(d time.Duration) int64 { return d.Milliseconds() }

// NilReply reports a nil reply, an acquire script's "acquired".
func NilReply(reply any) bool { return reply == nil }

// OneReply reports a reply of 1, a lock's acquire script's "acquired"
// (see package lua).
func OneReply(reply any) bool { return reply == int64(1) }

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

// Forced reads a force-unlock script's reply: {1, <field>...} when it
// deleted the lock, the fields being its holders', or {0}.
func Forced(reply any) (fields []string, deleted bool, err error) {
	r, ok := reply.([]any)
	if !ok || len(r) == 0 {
		return nil, false, fmt.Errorf("unexpected force-unlock reply %v", reply)
	}
	if r[0] != int64(1) {
		return nil, false, nil
	}
	fields = make([]string, 0, len(r)-1)
	for _, f := range r[1:] {
		if s, ok := f.(string); ok {
			fields = append(fields, s)
		}
	}
	return fields, true, nil
}
