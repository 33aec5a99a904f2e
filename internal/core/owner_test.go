package core_test

import (
	"context"
	"testing"

	"github.com/relock-go/relock/internal/core"
)

// FuzzOwners drives a chain of contexts with a script of operations: 'n'
// starts a new owner, 'e' ensures one, 'v' adds an unrelated value, 'c'
// derives a cancellable child. Whatever the chain, a context carries
// exactly the owner last set on it or an ancestor, EnsureOwner never
// replaces one, and every new owner is distinct from all before it.
func FuzzOwners(f *testing.F) {
	for _, s := range []string{"", "n", "e", "ee", "nvn", "cecn", "vvvcnnc", "evcnevnc"} {
		f.Add(s)
	}
	type key struct{}
	f.Fuzz(func(t *testing.T, script string) {
		if len(script) > 256 {
			return
		}
		ctx := context.Background()
		var want int64
		has := false
		seen := map[int64]bool{}
		for _, op := range script {
			switch op {
			case 'n':
				var id int64
				ctx, id = core.WithNewOwner(ctx)
				if seen[id] || id <= 0 {
					t.Fatalf("WithNewOwner gave %d again (or non-positive)", id)
				}
				seen[id], want, has = true, id, true
			case 'e':
				var id int64
				ctx, id = core.EnsureOwner(ctx)
				if has && id != want {
					t.Fatalf("EnsureOwner replaced owner %d with %d", want, id)
				}
				if !has {
					if seen[id] || id <= 0 {
						t.Fatalf("EnsureOwner gave %d again (or non-positive)", id)
					}
					seen[id], want, has = true, id, true
				}
			case 'v':
				ctx = context.WithValue(ctx, key{}, op)
			case 'c':
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				defer cancel()
			}
			got, ok := core.OwnerFrom(ctx)
			if ok != has || got != want {
				t.Fatalf("after %q: OwnerFrom = %d, %v; want %d, %v", op, got, ok, want, has)
			}
		}
	})
}
