package relock_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/election"
	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/grouplock"
	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/latch"
	"github.com/relock-go/relock/multilock"
	"github.com/relock-go/relock/nonreentrant"
	"github.com/relock-go/relock/permits"
	"github.com/relock-go/relock/redlock"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/rwlock"
	"github.com/relock-go/relock/semaphore"
	"github.com/relock-go/relock/spinlock"
)

// callAll calls every exported method of v with ctx for each context
// argument and harmless values for the others (a wait of 0: one
// attempt), and returns, by method, the error it returned ("" for none)
// or what went wrong: a panic, or no return within a few seconds.
func callAll(t *testing.T, v any, ctx context.Context) map[string]error {
	t.Helper()
	out := make(map[string]error)
	rv := reflect.ValueOf(v)
	for i := range rv.NumMethod() {
		name := rv.Type().Method(i).Name
		m := rv.Method(i)
		args := make([]reflect.Value, m.Type().NumIn())
		for j := range args {
			in := m.Type().In(j)
			switch {
			case in == reflect.TypeFor[context.Context]():
				args[j] = reflect.Zero(in)
				if ctx != nil {
					args[j] = reflect.ValueOf(ctx)
				}
			case in.Kind() == reflect.String:
				// A well-formed permit id, a candidate's value.
				args[j] = reflect.ValueOf("0123456789abcdef0123456789abcdef").Convert(in)
			case in.Kind() == reflect.Int64 && in != reflect.TypeFor[time.Duration]():
				args[j] = reflect.ValueOf(int64(1)).Convert(in)
			default:
				args[j] = reflect.Zero(in)
			}
		}
		done := make(chan error, 1)
		go func() {
			defer func() {
				if r := recover(); r != nil {
					done <- fmt.Errorf("panicked: %v", r)
				}
			}()
			var err error
			for _, r := range m.Call(args) {
				if e, ok := r.Interface().(error); ok {
					err = e
				}
			}
			done <- err
		}()
		select {
		case err := <-done:
			out[name] = err
		case <-time.After(5 * time.Second):
			out[name] = errors.New("did not return within 5s")
		}
	}
	return out
}

// accessors are the methods that return no error, and must only not
// panic.
var accessors = map[string]bool{"Name": true, "Client": true, "Quorum": true, "Reader": true, "Writer": true, "ID": true, "Context": true}

// TestUnmade: bad input is an error, never a panic. Every method of a
// lock or synchronizer that New did not make (a zero value), and of a nil
// permits.Permit, returns an error matching relock.ErrInvalidArgument;
// every operation given a nil context (an Unlock deferred before the
// error check of a Lock that failed) too, and changes nothing.
func TestUnmade(t *testing.T) {
	zero := map[string]any{
		"reentrant.Mutex":        &reentrant.Mutex{},
		"fair.Mutex":             &fair.Mutex{},
		"rwlock.RWMutex":         &rwlock.RWMutex{},
		"rwlock.Side":            &rwlock.Side{},
		"spinlock.Mutex":         &spinlock.Mutex{},
		"nonreentrant.Mutex":     &nonreentrant.Mutex{},
		"nonreentrant.FairMutex": &nonreentrant.FairMutex{},
		"multilock.MultiLock":    &multilock.MultiLock{},
		"grouplock.Mutex":        &grouplock.Mutex{},
		"permits.Semaphore":      &permits.Semaphore{},
		"permits.Permit":         &permits.Permit{},
		"nil *permits.Permit":    (*permits.Permit)(nil),
		"semaphore.Semaphore":    &semaphore.Semaphore{},
		"latch.Latch":            &latch.Latch{},
		"election.Election":      &election.Election{},
		"redlock.RedLock":        &redlock.RedLock{},
	}
	bg := context.Background()
	for what, v := range zero {
		for m, err := range callAll(t, v, bg) {
			switch {
			case accessors[m] && err != nil:
				t.Errorf("%s{}.%s: %v", what, m, err)
			case !accessors[m] && !errors.Is(err, core.ErrUnmade):
				t.Errorf("%s{}.%s = %v, want an error matching ErrUnmade", what, m, err)
			case !accessors[m] && !errors.Is(err, relock.ErrInvalidArgument):
				t.Errorf("%s{}.%s = %v, want an error matching relock.ErrInvalidArgument", what, m, err)
			}
		}
	}
	//lint:ignore SA1012 a nil context, as a failed Campaign returns, on purpose
	if term, ok := election.TermOf(nil); ok || term != 0 {
		t.Errorf("TermOf(nil) = %d, %v; want 0, false", term, ok)
	}
	for _, p := range []*permits.Permit{nil, {}} {
		if id := p.ID(); id != "" {
			t.Errorf("unmade Permit's ID = %q, want \"\"", id)
		}
		if cause := context.Cause(p.Context()); !errors.Is(cause, relock.ErrInvalidArgument) {
			t.Errorf("unmade Permit's context cause = %v, want a done context with cause ErrInvalidArgument", cause)
		}
	}

	srv := redistest.Start(t)
	rc := redistest.Relock(t, srv.LockClient(t), nil)
	raw := srv.Client(t)
	name := redistest.Key(t)
	rw := rwlock.New(rc, name+"-rw", nil)
	ps := permits.New(rc, name+"-permits", nil)
	if _, err := ps.TrySetPermits(bg, 1); err != nil {
		t.Fatal(err)
	}
	permit, err := ps.Acquire(bg)
	if err != nil {
		t.Fatal(err)
	}
	mu := reentrant.New(rc, name, nil)
	lctx, err := mu.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	made := map[string]any{
		"reentrant.Mutex":        mu,
		"fair.Mutex":             fair.New(rc, name+"-fair", nil),
		"rwlock.RWMutex":         rw,
		"rwlock.Side":            rw.Reader(),
		"spinlock.Mutex":         spinlock.New(rc, name+"-spin", nil),
		"nonreentrant.Mutex":     nonreentrant.New(rc, name+"-nr", nil),
		"nonreentrant.FairMutex": nonreentrant.NewFair(rc, name+"-nrfair", nil),
		"multilock.MultiLock":    multilock.New(reentrant.New(rc, name+"-m1", nil), reentrant.New(rc, name+"-m2", nil)),
		"grouplock.Mutex":        grouplock.New(rc, name+"-group", []string{"a", "b"}, nil),
		"permits.Semaphore":      ps,
		"permits.Permit":         permit,
		"semaphore.Semaphore":    semaphore.New(rc, name+"-sem", nil),
		"latch.Latch":            latch.New(rc, name+"-latch", nil),
		"election.Election":      election.New(rc, name+"-election", nil),
		"redlock.RedLock":        redlock.New([]*relock.Client{rc}, name+"-red", nil),
	}
	keys := raw.Keys(bg, "*").Val()
	for what, v := range made {
		for m, err := range callAll(t, v, nil) {
			switch {
			case accessors[m] && err != nil:
				t.Errorf("%s.%s: %v", what, m, err)
			case !accessors[m] && !errors.Is(err, core.ErrNilContext):
				t.Errorf("%s.%s(nil, ...) = %v, want an error matching ErrNilContext", what, m, err)
			case !accessors[m] && !errors.Is(err, relock.ErrInvalidArgument):
				t.Errorf("%s.%s(nil, ...) = %v, want an error matching relock.ErrInvalidArgument", what, m, err)
			}
		}
	}
	if after := raw.Keys(bg, "*").Val(); len(after) != len(keys) {
		t.Errorf("calls with a nil context changed Redis: keys %v, then %v", keys, after)
	}
	if n, err := mu.HoldCount(lctx); n != 1 || err != nil || lctx.Err() != nil {
		t.Errorf("after Unlock(nil): HoldCount = %d, %v, lock context %v; want the hold kept", n, err, lctx.Err())
	}
	if err := mu.Unlock(lctx); err != nil {
		t.Error(err)
	}
	if err := permit.Release(bg); err != nil {
		t.Error(err)
	}
}
