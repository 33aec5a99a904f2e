package main

// A kind is one lock type whose methods the template writes, and what
// sets it apart from the others. Each flag picks the template's
// sentences and calls; the doc comments read the same wherever the
// behaviour is the same.
type kind struct {
	Pkg  string // the package, as $GOPACKAGE names it
	Type string // the exported type: Mutex or FairMutex
	// Fair: a queue orders the waiters (internal/fairlock), the type
	// keeps a fairlock.Mutex in field m, and the template writes its
	// constructor New, whose options are Options; else the type keeps
	// a hashlock.Lock in l, and the package writes its constructor.
	Fair         bool
	New, Options string
	// Reentrant: an owner's Lock calls count holds; else a second is
	// refused with relock.ErrNotReentrant.
	Reentrant bool
	// Poll: waiters poll, releases publish nothing (Redisson's spin lock).
	Poll bool
	// Group: the lock is a set of values of one group (package
	// grouplock), which writes Name, Unlock, ForceUnlock and the state
	// queries itself.
	Group bool
}

// Refuses reports that the type's own lock method refuses an owner
// that holds the lock before it acquires: a non-reentrant lock on
// hashlock (fairlock's Mutex refuses on its own).
func (k kind) Refuses() bool { return !k.Reentrant && !k.Fair }

// kinds are every type the template writes methods for, in the order of
// their package's file.
var kinds = []kind{
	{Pkg: "reentrant", Type: "Mutex", Reentrant: true},
	{Pkg: "spinlock", Type: "Mutex", Reentrant: true, Poll: true},
	{Pkg: "nonreentrant", Type: "Mutex"},
	{Pkg: "nonreentrant", Type: "FairMutex", Fair: true, New: "NewFair", Options: "FairOptions"},
	{Pkg: "fair", Type: "Mutex", Fair: true, Reentrant: true, New: "New", Options: "Options"},
	{Pkg: "grouplock", Type: "Mutex", Reentrant: true, Group: true},
}
