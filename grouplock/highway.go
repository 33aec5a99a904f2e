package grouplock

import "encoding/binary"

// HighwayHash (Google's, github.com/google/highwayhash), 128-bit output,
// keyed as Redisson's org.redisson.misc.Hash keys it. Written from the
// algorithm; hash_test.go pins outputs that Redisson's own HighwayHash
// gave for the same bytes.

// redissonKey is Hash.KEY.
var redissonKey = [4]uint64{0x9e3779b97f4a7c15, 0xf39cc0605cedc834, 0x1082276bf3a27251, 0xf86c6a11d0c18e95}

type highway struct {
	v0, v1, mul0, mul1 [4]uint64
}

// highway128 hashes data whole: its 32-byte packets, then the remainder.
func highway128(data []byte) (uint64, uint64) {
	var h highway
	h.reset(redissonKey)
	n := len(data) &^ 31
	for i := 0; i < n; i += 32 {
		h.packet(data[i:])
	}
	if len(data) > n {
		h.remainder(data[n:])
	}
	for range 6 {
		h.permuteAndUpdate()
	}
	return h.v0[0] + h.mul0[0] + h.v1[2] + h.mul1[2], h.v0[1] + h.mul0[1] + h.v1[3] + h.mul1[3]
}

func (h *highway) reset(key [4]uint64) {
	h.mul0 = [4]uint64{0xdbe6d5d5fe4cce2f, 0xa4093822299f31d0, 0x13198a2e03707344, 0x243f6a8885a308d3}
	h.mul1 = [4]uint64{0x3bd39e10cb0ef593, 0xc0acf169b5f18a8c, 0xbe5466cf34e90c6c, 0x452821e638d01377}
	for i := range 4 {
		h.v0[i] = h.mul0[i] ^ key[i]
		h.v1[i] = h.mul1[i] ^ swapHalves(key[i])
	}
}

func swapHalves(x uint64) uint64 { return x>>32 | x<<32 }

// packet updates with the first 32 bytes of p, as four little-endian
// lanes.
func (h *highway) packet(p []byte) {
	h.update([4]uint64{
		binary.LittleEndian.Uint64(p[0:]),
		binary.LittleEndian.Uint64(p[8:]),
		binary.LittleEndian.Uint64(p[16:]),
		binary.LittleEndian.Uint64(p[24:]),
	})
}

func (h *highway) update(a [4]uint64) {
	for i := range 4 {
		h.v1[i] += h.mul0[i] + a[i]
	}
	for i := range 4 {
		h.mul0[i] ^= (h.v1[i] & 0xffffffff) * (h.v0[i] >> 32)
		h.v0[i] += h.mul1[i]
		h.mul1[i] ^= (h.v0[i] & 0xffffffff) * (h.v1[i] >> 32)
	}
	h.v0[0] += zipperMerge0(h.v1[1], h.v1[0])
	h.v0[1] += zipperMerge1(h.v1[1], h.v1[0])
	h.v0[2] += zipperMerge0(h.v1[3], h.v1[2])
	h.v0[3] += zipperMerge1(h.v1[3], h.v1[2])
	h.v1[0] += zipperMerge0(h.v0[1], h.v0[0])
	h.v1[1] += zipperMerge1(h.v0[1], h.v0[0])
	h.v1[2] += zipperMerge0(h.v0[3], h.v0[2])
	h.v1[3] += zipperMerge1(h.v0[3], h.v0[2])
}

func zipperMerge0(v1, v0 uint64) uint64 {
	return (v0&0xff000000|v1&0xff00000000)>>24 |
		(v0&0xff0000000000|v1&0xff000000000000)>>16 |
		v0&0xff0000 | (v0&0xff00)<<32 |
		(v1&0xff00000000000000)>>8 | v0<<56
}

func zipperMerge1(v1, v0 uint64) uint64 {
	return (v1&0xff000000|v0&0xff00000000)>>24 |
		v1&0xff0000 | (v1&0xff0000000000)>>16 |
		(v1&0xff00)<<24 | (v0&0xff000000000000)>>8 |
		(v1&0xff)<<48 | v0&0xff00000000000000
}

// remainder updates with the last len(r) (1 to 31) bytes of the input.
func (h *highway) remainder(r []byte) {
	size := len(r)
	mod4, whole := size&3, size&^3
	for i := range 4 {
		h.v0[i] += uint64(size)<<32 + uint64(size)
	}
	for i := range 4 {
		h.v1[i] = rotate32(h.v1[i], uint(size))
	}
	var p [32]byte
	copy(p[:], r[:whole])
	if size&16 != 0 {
		copy(p[28:], r[whole+mod4-4:whole+mod4])
	} else if mod4 != 0 {
		p[16] = r[whole]
		p[17] = r[whole+mod4>>1]
		p[18] = r[whole+mod4-1]
	}
	h.packet(p[:])
}

// rotate32 rotates each 32-bit half of lane left by n.
func rotate32(lane uint64, n uint) uint64 {
	lo, hi := uint32(lane), uint32(lane>>32)
	lo, hi = lo<<n|lo>>(32-n), hi<<n|hi>>(32-n)
	return uint64(hi)<<32 | uint64(lo)
}

func (h *highway) permuteAndUpdate() {
	h.update([4]uint64{swapHalves(h.v0[2]), swapHalves(h.v0[3]), swapHalves(h.v0[0]), swapHalves(h.v0[1])})
}
