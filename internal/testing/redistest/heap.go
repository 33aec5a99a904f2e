package redistest

import "runtime"

// Heap returns the bytes of live heap objects after two garbage
// collections (the second frees what the first's finalizers let go), for
// tests that check a structure stops growing: compare Heap before and
// after a bounded loop, with a threshold far above the noise.
func Heap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
