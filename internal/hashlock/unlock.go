package hashlock

import (
	"context"
	"fmt"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/transport"
	"github.com/relock-go/relock/observe"
)

// Release sends up to holds unlocks of field's hold in Redis, one after
// another through the scripts client, under ctx: what Client.Shutdown
// does with a hold of this lock. It stops at an error, or once Redis
// reports the field gone or the lock released.
func (l *Lock) Release(ctx context.Context, field string, holds int) error {
	f := Field{Name: field, Arg: field}
	for range holds {
		reply, err := l.ops.Unlock(ctx, l.C.Pipe, f, true)
		if n, _ := reply.(int64); err != nil || reply == nil || n == 1 {
			// An error, nothing (more) held, or the lock released.
			return err
		}
	}
	return nil
}

// Unlock releases one hold of ctx's owner.
func (l *Lock) Unlock(ctx context.Context) (err error) {
	end, err := l.Begin(ctx)
	if err != nil {
		return err
	}
	defer end()
	octx, observed := l.C.StartUnlock(ctx, l.Kind, observe.OpUnlock, l.shown())
	if observed != nil {
		defer func() { observed(err) }()
	}
	key, f, ok := l.owner(ctx)
	if !ok {
		return l.errorf("unlock", relock.ErrNoOwner)
	}
	// The unlock runs by ctx's deadline, or within core.Grace when ctx
	// is done already (a lock context whose parent ended).
	u := l.C.BeginUnlock(key) // the hold protocol (core/protocol.go)
	defer u.End()
	holds := u.Holds()
	cctx, cancel := l.C.CleanupContext(octx)
	// Through the acquires' client: its connections are the ones the
	// owner's Lock used, so an Unlock given only core.Grace (its context
	// done) rarely waits for a dial and a TLS handshake, and a reply it
	// loses is handled here rather than resent by go-redis.
	reply, err := l.ops.Unlock(cctx, l.C.Pipe, f, holds == 1)
	cancel()
	if err != nil {
		// Read ctx's end first: ending the hold below cancels ctx when
		// it is one of the hold's own contexts.
		ended := transport.Ended(ctx, nil, err)
		_, _ = u.Done(ctx, nil, err)
		// The owner's last hold, or a hold Redis may still have for an
		// owner that holds none here (lost to a partition, say), is
		// released in the background once Redis answers: an unlock sent
		// twice finds nothing the second time, and the owner's next Lock
		// waits for it.
		again := holds <= 1 && transport.Transient(err) && l.C.Detach(ctx, key, func(ctx context.Context) {
			_ = transport.Retry(ctx, func(ctx context.Context) error {
				_, err := l.ops.Unlock(ctx, l.C.Pipe, f, true)
				return err
			})
		})
		switch {
		case holds == 0 && transport.Transient(err):
			// The answer is known here: this owner holds nothing.
			return l.errorf("unlock", fmt.Errorf("%w (Redis did not answer: %w)", relock.ErrNotHeld, err))
		case again:
			ended = fmt.Errorf("%w (sent again in the background, for up to %v; the lease bounds what it cannot do)", ended, transport.OpTimeout)
		}
		return l.errorf("unlock", ended)
	}
	switch released, err := u.Done(ctx, reply, nil); {
	case err != nil:
		return l.errorf("unlock", err)
	case !released:
		return l.errorf("unlock", relock.ErrNotHeld)
	}
	return nil
}

// ForceUnlock deletes the lock whoever holds it, through force (the
// lock type's Ops), and tells its holders' clients (core.ForceUnlocked).
func (l *Lock) ForceUnlock(ctx context.Context, force Forcer) (bool, error) {
	end, err := l.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer end()
	opctx, cancel := l.C.OpContext(ctx)
	defer cancel()
	reply, err := force.ForceUnlock(opctx)
	if err != nil {
		return false, l.errorf("force unlock", err)
	}
	fields, deleted, err := transport.Forced(reply)
	if err != nil {
		return false, l.errorf("force unlock", err)
	}
	// Local holds end even when there was nothing to delete: the lock
	// they recorded has already expired.
	l.C.ForceUnlocked(ctx, l.Name, fields)
	return deleted, nil
}

// Token returns the fencing token of ctx's owner's current hold.
func (l *Lock) Token(ctx context.Context) (int64, error) {
	key, ok := l.Key(ctx)
	if !ok {
		return 0, l.errorf("token of", relock.ErrNotHeld)
	}
	token, ok := l.C.Token(key)
	if !ok {
		return 0, l.errorf("token of", relock.ErrNotHeld)
	}
	return token, nil
}
