// Relockvet checks that relock lock contexts are kept and given to their
// release.
//
// A relock lock call returns a context that carries the hold's owner,
// and only a context carrying that owner releases the hold. Relockvet
// reports an Unlock or RUnlock given a context that carries no owner
// (most often the one the Lock was given), a lock call whose returned
// context is discarded, a lock context that some path to a return never
// releases, and a release (of a lock context or a semaphore's permits)
// deferred before the error check of the acquire it undoes, and a lock
// call in a goroutine given the lock context of the same lock, which
// re-enters the parent's hold instead of waiting for it. Package
// github.com/relock-go/relock/cmd/relockvet/lockctx documents what it
// proves and what it presumes.
//
// Install it and run it through go vet:
//
//	go install github.com/relock-go/relock/cmd/relockvet@latest
//	go vet -vettool=$(which relockvet) ./...
//
// or on its own, as relockvet ./..., which takes the same package
// patterns.
package main

import (
	"golang.org/x/tools/go/analysis/singlechecker"

	"github.com/relock-go/relock/cmd/relockvet/lockctx"
)

func main() { singlechecker.Main(lockctx.Analyzer) }
