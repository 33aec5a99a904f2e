package core

import "context"

// Ends collects what a hold undoes when it ends: the cancel funcs of the
// contexts its Lock calls returned, and the stops of its watches on other
// contexts (context.AfterFunc). The zero value is ready to use. It is not
// safe for concurrent use: the hold's owner guards it.
type Ends struct {
	first   context.CancelCauseFunc // most holds return one context
	cancels []context.CancelCauseFunc
	stops   []func() bool
}

// Add records the cancel func of a context the hold returned.
func (e *Ends) Add(cancel context.CancelCauseFunc) {
	if e.first == nil {
		e.first = cancel
		return
	}
	e.cancels = append(e.cancels, cancel)
}

// Watch records the stop func of a watch the hold keeps.
func (e *Ends) Watch(stop func() bool) { e.stops = append(e.stops, stop) }

// Cancel cancels every context the hold returned with cause (nil: the
// owner's last Unlock, ErrUnlocked); the watches stay.
func (e *Ends) Cancel(cause error) {
	if cause == nil {
		cause = ErrUnlocked
	}
	if e.first != nil {
		e.first(cause)
	}
	for _, cancel := range e.cancels {
		cancel(cause)
	}
}

// End stops the watches, then cancels every context with cause.
func (e *Ends) End(cause error) {
	for _, stop := range e.stops {
		stop()
	}
	e.Cancel(cause)
}
