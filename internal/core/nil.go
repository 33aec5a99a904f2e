package core

// NilReceiver returns the error of every method of a nil *typ, typ a
// type of package pkg: "<pkg>: nil *<typ>", matching ErrUnmade and so
// ErrInvalidArgument. A type keeps it in a variable, made once.
func NilReceiver(pkg, typ string) error {
	return &narrower{pkg + ": nil *" + typ, ErrUnmade}
}
