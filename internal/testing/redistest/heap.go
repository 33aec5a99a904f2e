package redistest

import (
	"runtime"
	"testing"
	"time"
)

// Heap returns the bytes of live heap objects after two garbage
// collections (the second frees what the first's finalizers let go), for
// tests that check a structure stops growing (HeapBack).
func Heap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// HeapBack waits, up to within, for the heap to be back within limit
// bytes of before, a Heap taken before a bounded loop of n steps, and
// fails tb with the growth a step otherwise. It returns the growth last
// seen. limit must be far above the noise (a few KB) and far below what
// a leak of the loop leaves.
func HeapBack(tb testing.TB, before uint64, limit int64, n int, within time.Duration) int64 {
	tb.Helper()
	deadline := time.Now().Add(within)
	for {
		grown := int64(Heap()) - int64(before)
		if grown < limit {
			return grown
		}
		if time.Now().After(deadline) {
			tb.Fatalf("heap %+d B after %d steps (%d B a step), want under %+d B", grown, n, grown/int64(n), limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
