package fence_test

import (
	"math/rand/v2"
	"testing"

	"github.com/relock-go/relock/internal/testing/redistest"
)

// srv is the redis-server shared by the package's tests; each test uses
// its own resources and keys.
var srv *redistest.Server

func TestMain(m *testing.M) { redistest.Main(m, nil, &srv) }

// shuffled returns the tokens 1..n in rising order, shuffled within
// blocks of block (which divides n), as successive holders' tokens reach
// storage out of order.
func shuffled(n, block int) []int64 {
	tokens := make([]int64, 0, n)
	for start := 0; start < n; start += block {
		for _, i := range rand.Perm(block) {
			tokens = append(tokens, int64(start+i+1))
		}
	}
	return tokens
}
