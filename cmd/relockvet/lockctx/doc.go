// Package lockctx defines an Analyzer that checks that the context a
// relock lock call returns is kept and is the one its release is given.
//
// A relock lock call (Lock, TryLock, RLock, TryRLock) returns a new
// context: the owner of the hold travels in it, and only a context that
// carries that owner can release the hold. The Analyzer reports three
// mistakes, each of which leaves a lock held after its holder is done
// with it, renewed until its Client closes (or, once relock finds the
// context unreachable, until its lease runs out):
//
//   - an Unlock or RUnlock given a context that carries no owner, most
//     often the one the Lock was given (lctx, err := mu.Lock(ctx); defer
//     mu.Unlock(ctx)); at run time it fails with relock.ErrNoOwner;
//   - a lock call whose returned context is discarded (assigned to _, or
//     the call used as a statement), so that nothing can name the owner;
//   - a lock context for which some path from the lock call to a return
//     of the function has no release given it, found on the function's
//     control-flow graph as go vet's lostcancel pass finds lost cancel
//     functions. A deferred release covers every path after the defer.
//
// It also reports a release deferred before the error check of the
// acquire it undoes (lctx, err := mu.Lock(ctx); defer mu.Unlock(lctx);
// if err != nil ...): when the acquire fails, what it returned is nil
// and the release fails with relock.ErrInvalidArgument (see "Early
// releases").
//
// And it reports a lock call in a goroutine given the lock context of
// the same lock from outside it (see "Goroutines"): the goroutine
// shares the parent's owner, re-enters its hold at once, and excludes
// neither its parent nor its siblings.
//
// An election's Campaign and TryCampaign are lock calls too, but their
// release, Resign, finds the leadership through the Election, not its
// context: the Analyzer reports only a discarded leadership context,
// which carries the term and is how a leader learns that it lost.
//
// # What counts
//
// A lock call is a call of one of those methods, declared in a package
// of the relock module (github.com/relock-go/relock and below, main
// packages aside), that takes a context.Context first and returns
// (context.Context, error); relock.Locker interface values are included.
// Its release is Unlock, RUnlock or Resign called on the same receiver
// expression (mu, w.mu): receivers the Analyzer cannot compare (a call
// such as rw.Reader()) are matched with no release.
//
// A context carries no owner, as far as the Analyzer can prove, when it
// derives, through context.WithCancel, WithTimeout, WithDeadline (and
// their Cause forms) and WithoutCancel, from context.Background,
// context.TODO, or a parameter of the function that the function gives
// to a lock call of the same receiver. That last step is a presumption:
// a function that locks with ctx is taken to be given a context from
// before the lock. When ctx did carry an owner (a Lock re-entered with a
// caller's lock context), Unlock(ctx) works at run time but is still
// reported: the context Lock returned is right in both cases.
//
// # What is not reported
//
// False reports cost more than missed ones, so the Analyzer is silent
// whenever the returned context may have another name or release:
//
//   - the lock's context argument may carry an owner (it comes from
//     relock.WithNewOwner, an earlier lock call, a field, a call of
//     another function): a release given that argument releases the
//     hold too;
//   - the returned context escapes: it is returned, assigned, stored,
//     sent, given to a function (context.Cause and the derivations above
//     aside) or to a release on another receiver expression or of
//     another kind, or used in a function literal other than one
//     deferred where it is written (a goroutine or a callback may
//     release it);
//   - the returned context is assigned to a variable declared before the
//     call (ctx, err = mu.Lock(ctx)), whose other values the Analyzer
//     does not track;
//   - the function closes or shuts down a relock.Client, which releases
//     every hold the Client has.
//
// A path ends without a report at a release given the lock context or a
// child of it, and at a receive from the lock context's Done: the hold
// was released or lost by then, or a parent context ended, which leaves
// the hold in place but is given the benefit of the doubt. Calls that
// never return (panic, log.Fatal, t.Fatal) end a path with no return.
//
// Paths on which the lock call failed hold nothing: the Analyzer drops
// the failure branch of a condition on the call's error (err != nil,
// err == nil, errors.Is(err, ...), errors.As(err, ...), and their
// negations, conjunctions and disjunctions, in an if statement or a
// tagless switch case) on paths where nothing has assigned the error
// variable since the lock call.
//
// # Goroutines
//
// A worker is the function literal of a go statement, or the one given
// to the Go method of an errgroup.Group (golang.org/x/sync/errgroup) or
// a sync.WaitGroup. A lock call inside a worker (Lock, TryLock, RLock,
// TryRLock; not Campaign) is reported when every value its context
// argument can have derives, through the context functions above and
// errgroup.WithContext, from the context a lock call of the same
// receiver expression returned outside the worker, the worker's
// parameters bound to what the go statement gives them. Nothing is
// reported for a context that may carry another owner
// (relock.WithNewOwner, a parameter of the enclosing function, a
// variable with another value on some path), for a lock of another
// receiver, for a named function run as a goroutine (go work(lctx)),
// whose body the Analyzer does not follow, or for the call chain of one
// goroutine, the documented use of a lock context. A worker meant to
// share its parent's hold needs no lock call of its own; one that must
// wait for the hold locks with relock.WithNewOwner(ctx).
//
// # Early releases
//
// An acquire here is a lock call, or an Acquire or TryAcquire of a
// relock package whose last result is an error (a permits.Semaphore's,
// which returns a *permits.Permit; a semaphore.Semaphore's, which
// returns only the error), whose error is assigned to a variable. The
// statements after it in its block are followed up to the first one
// that names that variable, or assigns what the acquire returned: a
// defer statement among them whose call, or a call in its deferred
// function literal, is an Unlock, RUnlock or Release of the relock
// module naming the acquired context or permit (for a semaphore.Semaphore,
// a Release on the same receiver expression) is reported. A deferred
// function that reads the error itself names it, and ends the search.
package lockctx
